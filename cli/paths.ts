/**
 * The files and folders a CLI reads and writes, checked before anything is written or trained.
 * Every command takes its output paths through checkOutFolder or checkOutFile and its input files
 * through readInputFile, so an empty path, a file where a folder is expected, a device, a folder
 * that cannot be written, a non-empty folder or a path on a pseudo filesystem (/proc, /sys, /dev)
 * is refused with one line (a UsageError) naming the flag, and never becomes a write into the
 * working folder, a recursive mkdir that cannot end, or a read that does not stop.
 */
import { accessSync, closeSync, constants, fstatSync, openSync, readdirSync, readSync, realpathSync, statSync, type Stats } from 'node:fs';
import { dirname, resolve, sep } from 'node:path';
import { UsageError } from './usageError';

/** Folders of kernel pseudo filesystems: writes there reach the kernel or a device, never a file kept on disk. */
const PSEUDO_ROOTS = ['/proc', '/sys', '/dev'];

function errnoOf(e: unknown): string {
  return (e as NodeJS.ErrnoException).code ?? (e as Error).message;
}

/** What a path is, in words, when it is not a plain file or folder. */
function oddKind(st: Stats): string | null {
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isFIFO()) return 'a pipe';
  if (st.isSocket()) return 'a socket';
  return null;
}

/** The path with symbolic links resolved as far as it exists (what is missing is appended as written). */
function realish(abs: string): string {
  let head = abs;
  const tail: string[] = [];
  for (;;) {
    try {
      return [realpathSync(head), ...tail].join(sep).replace(/\/+/g, '/');
    } catch {
      const up = dirname(head);
      if (up === head) return abs;
      tail.unshift(head.slice(up.length).replace(/^\/+/, ''));
      head = up;
    }
  }
}

function refusePseudo(label: string, abs: string): void {
  const real = realish(abs);
  const root = PSEUDO_ROOTS.find((r) => real === r || real.startsWith(`${r}/`));
  if (root) throw new UsageError(`${label}: on the kernel's ${root} filesystem; expected a path on a disk`);
}

function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch (e) {
    // ENOTDIR: a part of the path is a file; the walk up to it names that file.
    if (errnoOf(e) === 'ENOENT' || errnoOf(e) === 'ENOTDIR') return null;
    throw e;
  }
}

/** The nearest folder that exists at or above `abs`; refuses a file or device met on the way. */
function existingAncestor(label: string, abs: string): string {
  let dir = dirname(abs);
  for (;;) {
    let st: Stats | null;
    try {
      st = statOrNull(dir);
    } catch (e) {
      throw new UsageError(`${label}: ${dir} cannot be used (${errnoOf(e)})`);
    }
    if (st) {
      if (!st.isDirectory()) throw new UsageError(`${label}: ${dir} is ${oddKind(st) ?? 'a file'}, not a folder`);
      return dir;
    }
    const up = dirname(dir);
    if (up === dir) throw new UsageError(`${label}: no folder of it exists`);
    dir = up;
  }
}

function writable(label: string, dir: string): void {
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch (e) {
    throw new UsageError(`${label}: the folder ${dir} is not writable (${errnoOf(e)})`);
  }
}

function checkNotEmpty(flag: string, path: string, what: string): void {
  if (path.trim() === '') throw new UsageError(`${flag}: empty; expected ${what} (. for the working folder, named explicitly)`);
}

/**
 * A folder a command writes into, on a disk, existing and writable or with a writable parent.
 * `empty`: it must hold nothing yet (a folder to fill), or it may (a cache). Returns its absolute path.
 */
function checkFolder(flag: string, path: string, label: string, what: string, empty: boolean): string {
  checkNotEmpty(flag, path, what);
  const abs = resolve(path);
  const expected = empty ? 'a folder (a new one, or an empty one)' : 'a folder';
  let st: Stats | null;
  try {
    st = statOrNull(abs);
  } catch (e) {
    throw new UsageError(`${label}: cannot be used (${errnoOf(e)})`);
  }
  if (st && oddKind(st)) throw new UsageError(`${label}: is ${oddKind(st)}; expected ${expected}`);
  refusePseudo(label, abs);
  if (st) {
    if (!st.isDirectory()) throw new UsageError(`${label}: is a file; expected ${expected}`);
    writable(label, abs);
    if (empty && readdirSync(abs).length > 0) throw new UsageError(`${label}: the folder is not empty`);
    return abs;
  }
  writable(label, existingAncestor(label, abs));
  return abs;
}

/**
 * A folder to be created and filled (the recipe's --out): a new folder, or an existing empty one,
 * on a disk, with a writable parent. Returns its absolute path.
 */
export function checkOutFolder(flag: string, path: string, label = `${flag} ${path}`): string {
  return checkFolder(flag, path, label, 'the folder to write', true);
}

/**
 * A folder a command keeps reusable results in (why's --cache): like checkOutFolder, but one that
 * already holds files is the point of it, not a mistake. Returns its absolute path.
 */
export function checkCacheFolder(flag: string, path: string, label = `${flag} ${path}`): string {
  return checkFolder(flag, path, label, 'the folder to keep results in', false);
}

/**
 * A file to be written whole (a batch dump, a table, saved runs): a new file in an existing
 * writable folder, or an existing plain file to be replaced, on a disk. Returns its absolute path.
 */
export function checkOutFile(flag: string, path: string, label = `${flag} ${path}`): string {
  checkNotEmpty(flag, path, 'a file name');
  const abs = resolve(path);
  let st: Stats | null;
  try {
    st = statOrNull(abs);
  } catch (e) {
    throw new UsageError(`${label}: cannot be used (${errnoOf(e)})`);
  }
  if (st && oddKind(st)) throw new UsageError(`${label}: is ${oddKind(st)}; expected a file on a disk`);
  refusePseudo(label, abs);
  if (/[/\\]$/.test(path)) throw new UsageError(`${label}: names a folder; expected a file name`);
  if (st && st.isDirectory()) throw new UsageError(`${label}: is a folder; expected a file name`);
  if (st && !st.isFile()) throw new UsageError(`${label}: is ${oddKind(st) ?? 'not a plain file'}; expected a file on a disk`);
  const dir = dirname(abs);
  let parent: Stats | null;
  try {
    parent = statOrNull(dir);
  } catch (e) {
    throw new UsageError(`${label}: the folder ${dir} cannot be used (${errnoOf(e)})`);
  }
  if (!parent) throw new UsageError(`${label}: the folder ${dir} does not exist`);
  if (!parent.isDirectory()) throw new UsageError(`${label}: ${dir} is ${oddKind(parent) ?? 'a file'}, not a folder`);
  writable(label, dir);
  if (st) {
    try {
      accessSync(abs, constants.W_OK);
    } catch (e) {
      throw new UsageError(`${label}: the file is not writable (${errnoOf(e)})`);
    }
  }
  return abs;
}

const kib = (n: number) => `${Math.round(n / 1024).toLocaleString('en-US')} KiB`;

/**
 * A file's text, read in chunks and stopped at `maxBytes`: a device (/dev/zero), a pipe or a huge
 * file is refused when the cap is passed, not read to the end of memory. Must be UTF-8.
 */
export function readInputFile(flag: string, path: string, maxBytes: number): string {
  const label = `${flag} ${path}`;
  if (path.trim() === '') throw new UsageError(`${flag}: empty; expected a file name`);
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    throw new UsageError(`${label}: cannot read the file (${errnoOf(e)})`);
  }
  try {
    const st = fstatSync(fd);
    if (st.isDirectory()) throw new UsageError(`${label}: is a folder; expected a file`);
    if (st.isFile() && st.size > maxBytes) throw new UsageError(`${label}: ${kib(st.size)}; at most ${kib(maxBytes)} is read`);
    const chunks: Buffer[] = [];
    const buf = Buffer.alloc(64 * 1024);
    let total = 0;
    for (;;) {
      let n: number;
      try {
        n = readSync(fd, buf, 0, buf.length, null);
      } catch (e) {
        if (errnoOf(e) === 'EAGAIN') continue;
        throw new UsageError(`${label}: cannot read the file (${errnoOf(e)})`);
      }
      if (n === 0) break;
      total += n;
      if (total > maxBytes) throw new UsageError(`${label}: more than ${kib(maxBytes)}, the most that is read; stopped there`);
      chunks.push(Buffer.from(buf.subarray(0, n)));
    }
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
    } catch {
      throw new UsageError(`${label}: not UTF-8 text`);
    }
  } finally {
    closeSync(fd);
  }
}
