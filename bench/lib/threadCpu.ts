/**
 * Where a page's CPU time goes, by thread: the browser's processes read from /proc (Linux only).
 * A lesson step's ready time on a 2-core machine is bound by the CPU all of the browser's threads
 * use, not by the trainer workers' alone: the page's main thread draws the page, and V8 compiles
 * the same code again in every worker, on its own background threads (the renderer's thread pool).
 * This splits a window's CPU time into those parts, so a change can be judged by the part it moves.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';

/** Milliseconds per clock tick of /proc's times: USER_HZ is 100 on every Linux Chromium runs on. */
const TICK_MS = 10;

/** One thread's CPU time so far (user + system), in ms, and what it is. */
export interface ThreadSample {
  /** The process's --type= (renderer, gpu-process, utility), or 'browser' for the main process. */
  process: string;
  /** The thread's name as the kernel has it (15 characters at most). */
  thread: string;
  /** The process's main thread (tid = pid). */
  main: boolean;
  ms: number;
}

/** CPU seconds of a window, by part. */
export interface CpuParts {
  /** The renderers' main threads: the page's script, style, layout and paint. */
  pageMain: number;
  /** Dedicated workers: the trainers. */
  workers: number;
  /** The renderers' thread pool: V8's background compiles and GC, script parsing, raster. */
  rendererPool: number;
  /** Every other thread of the browser: its main process, the GPU process, compositor and I/O threads. */
  other: number;
  total: number;
}

/**
 * Every thread of the browser `root` launched (default: this process, which Playwright's launch
 * makes the browser's parent): its descendants that run a binary named as `exe` is, keyed pid/tid.
 * Another browser on the machine, a test run beside the bench, is left out. Null where /proc
 * cannot be read (not Linux).
 */
export function browserThreads(exe: string, root = process.pid, proc = '/proc'): Map<string, ThreadSample> | null {
  let pids: string[];
  try {
    pids = readdirSync(proc).filter((p) => /^\d+$/.test(p));
  } catch {
    return null;
  }
  const parent = new Map<string, string>();
  for (const pid of pids) {
    const st = readStat(join(proc, pid, 'stat'));
    if (st) parent.set(pid, st.fields[1]!);
  }
  const underRoot = (pid: string): boolean => {
    for (let p = parent.get(pid), hops = 0; p && hops < 64; p = parent.get(p), hops++) if (p === String(root)) return true;
    return false;
  };
  const out = new Map<string, ThreadSample>();
  for (const pid of pids) {
    if (!underRoot(pid)) continue;
    let cmd: string[];
    try {
      cmd = commandLine(readFileSync(join(proc, pid, 'cmdline'), 'utf8'));
    } catch {
      continue;
    }
    if (!cmd[0] || basename(cmd[0]) !== basename(exe)) continue;
    const type = cmd.find((a) => a.startsWith('--type='))?.slice('--type='.length) ?? 'browser';
    let tids: string[];
    try {
      tids = readdirSync(join(proc, pid, 'task'));
    } catch {
      continue;
    }
    for (const tid of tids) {
      const s = readStat(join(proc, pid, 'task', tid, 'stat'));
      // Fields 14 and 15 of stat (utime, stime): the 12th and 13th after the name.
      const ticks = s ? Number(s.fields[11]) + Number(s.fields[12]) : NaN;
      if (s && Number.isFinite(ticks)) out.set(`${pid}/${tid}`, { process: type, thread: s.name, main: tid === pid, ms: ticks * TICK_MS });
    }
  }
  return out;
}

/**
 * The CPU each part used between two samples: a thread absent from `before` started in the window;
 * one absent from `after` ended in it and is not counted (a lesson's workers live as long as its page).
 */
export function cpuParts(before: Map<string, ThreadSample>, after: Map<string, ThreadSample>): CpuParts {
  const parts: CpuParts = { pageMain: 0, workers: 0, rendererPool: 0, other: 0, total: 0 };
  for (const [key, t] of after) {
    const ms = t.ms - (before.get(key)?.ms ?? 0);
    if (ms <= 0) continue;
    const s = ms / 1000;
    if (t.process === 'renderer' && t.main) parts.pageMain += s;
    else if (t.process === 'renderer' && t.thread.startsWith('DedicatedWorker')) parts.workers += s;
    else if (t.process === 'renderer' && t.thread.startsWith('ThreadPool')) parts.rendererPool += s;
    else parts.other += s;
    parts.total += s;
  }
  return parts;
}

/**
 * A /proc cmdline's arguments. Chromium's zygote rewrites its children's (the renderers', the GPU
 * process's) as one string of space-separated arguments, where the kernel's has a NUL after each.
 */
export function commandLine(raw: string): string[] {
  const args = raw.split('\0').filter((a) => a !== '');
  return args.length === 1 ? args[0]!.split(' ').filter((a) => a !== '') : args;
}

/** A /proc stat line's name and the fields after it (state first); null if it is gone or unreadable. */
export function readStat(path: string): { name: string; fields: string[] } | null {
  let line: string;
  try {
    line = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  // The name is in parentheses and may itself hold spaces and parentheses: the last ')' ends it.
  const open = line.indexOf('(');
  const close = line.lastIndexOf(')');
  if (open < 0 || close < open) return null;
  return { name: line.slice(open + 1, close), fields: line.slice(close + 2).trim().split(' ') };
}
