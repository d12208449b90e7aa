/**
 * The page bench's CPU split by thread (bench/lib/threadCpu.ts) on a /proc tree written here: the
 * launched browser's threads only, each in its part, thread names with spaces and parentheses, and
 * threads that start or end between the two samples.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { browserThreads, commandLine, cpuParts, readStat } from '../../bench/lib/threadCpu';
import { lessonReadyTable } from '../../bench/lib/tables';

let root: string;
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** A stat line as the kernel writes it: utime and stime in ticks of 10 ms. */
const statLine = (pid: number, name: string, ppid: number, utime: number, stime: number) =>
  `${pid} (${name}) S ${ppid} ${pid} ${pid} 0 -1 4194560 100 0 0 0 ${utime} ${stime} 0 0 20 0 1 0 100 1000 50\n`;

interface FakeThread {
  tid: number;
  name: string;
  utime: number;
  stime?: number;
}

/** `argv` as the kernel writes it (a NUL after each), or as a string of one (`joined`: as Chromium's zygote rewrites its children's). */
function fakeProcess(pid: number, ppid: number, argv: string[], threads: FakeThread[], joined = false): void {
  const dir = join(root, String(pid));
  mkdirSync(join(dir, 'task'), { recursive: true });
  writeFileSync(join(dir, 'cmdline'), joined ? argv.join(' ') : argv.join('\0') + '\0');
  writeFileSync(join(dir, 'stat'), statLine(pid, threads[0]?.name ?? 'x', ppid, 0, 0));
  for (const t of threads) {
    mkdirSync(join(dir, 'task', String(t.tid)), { recursive: true });
    writeFileSync(join(dir, 'task', String(t.tid), 'stat'), statLine(t.tid, t.name, ppid, t.utime, t.stime ?? 0));
  }
}

/** The bench (pid 100) launched a browser (200) with a renderer (300) and a GPU process (400); another browser (900) is not its. */
function machine(renderer: FakeThread[]): void {
  fakeProcess(100, 1, ['node', 'bench/run.ts'], [{ tid: 100, name: 'node', utime: 500 }]);
  fakeProcess(200, 100, ['/usr/lib/chromium/chromium', '--headless'], [{ tid: 200, name: 'chromium', utime: 30 }]);
  fakeProcess(250, 200, ['/usr/lib/chromium/chromium', '--type=zygote'], [{ tid: 250, name: 'chromium', utime: 1 }]);
  fakeProcess(300, 250, ['/usr/lib/chromium/chromium', '--type=renderer', '--lang=en'], renderer, true);
  fakeProcess(400, 250, ['/usr/lib/chromium/chromium', '--type=gpu-process'], [{ tid: 400, name: 'chromium', utime: 10 }, { tid: 401, name: 'VizCompositorTh', utime: 4 }], true);
  fakeProcess(900, 1, ['/usr/lib/chromium/chromium', '--type=renderer'], [{ tid: 900, name: 'chromium', utime: 9999 }]);
  fakeProcess(950, 100, ['/usr/bin/esbuild', '--service'], [{ tid: 950, name: 'esbuild', utime: 77 }]);
}

describe('the browser CPU by thread (/proc)', () => {
  it('splits the launched browser threads into page main thread, workers, renderer pool and the rest', () => {
    root = mkdtempSync(join(tmpdir(), 'proc-'));
    machine([
      { tid: 300, name: 'chromium', utime: 40, stime: 2 },
      { tid: 301, name: 'DedicatedWorker', utime: 10 },
      { tid: 302, name: 'ThreadPoolForeg', utime: 5 },
      { tid: 303, name: 'Compositor', utime: 1 },
    ]);
    // Through the wrapper script's name (/usr/bin/chromium execs /usr/lib/chromium/chromium).
    const before = browserThreads('/usr/bin/chromium', 100, root)!;
    expect([...before.keys()].sort()).toEqual(['200/200', '250/250', '300/300', '300/301', '300/302', '300/303', '400/400', '400/401']);
    expect(before.get('300/300')).toEqual({ process: 'renderer', thread: 'chromium', main: true, ms: 420 });
    expect(before.get('200/200')!.process).toBe('browser');
    expect(before.get('400/401')!.process).toBe('gpu-process');

    // A window: the main thread and the pool work, one worker ends and a second starts, a thread
    // named with spaces and parentheses appears.
    rmSync(join(root, '300'), { recursive: true });
    fakeProcess(300, 250, ['/usr/lib/chromium/chromium', '--type=renderer'], [
      { tid: 300, name: 'chromium', utime: 140, stime: 2 },
      { tid: 302, name: 'ThreadPoolForeg', utime: 55 },
      { tid: 303, name: 'Compositor', utime: 1 },
      { tid: 304, name: 'DedicatedWorker', utime: 80, stime: 20 },
      { tid: 305, name: 'a (b) c', utime: 3 },
    ], true);
    const after = browserThreads('chromium', 100, root)!;
    const p = cpuParts(before, after);
    expect(p.pageMain).toBeCloseTo(1.0, 9);
    expect(p.workers).toBeCloseTo(1.0, 9);
    expect(p.rendererPool).toBeCloseTo(0.5, 9);
    expect(p.other).toBeCloseTo(0.03, 9);
    expect(p.total).toBeCloseTo(2.53, 9);
  });

  it('gives null where /proc cannot be read, and a stat line whose name holds ") " is read to its last ")"', () => {
    root = mkdtempSync(join(tmpdir(), 'proc-'));
    expect(browserThreads('chromium', 100, join(root, 'missing'))).toBeNull();
    writeFileSync(join(root, 'stat'), statLine(7, 'x) S 1 (y', 1, 12, 3));
    const s = readStat(join(root, 'stat'))!;
    expect(s.name).toBe('x) S 1 (y');
    expect([s.fields[0], s.fields[1], s.fields[11], s.fields[12]]).toEqual(['S', '1', '12', '3']);
    expect(readStat(join(root, 'gone'))).toBeNull();
    expect(commandLine('/usr/lib/chromium/chromium\0--type=utility\0--x=a b\0')).toEqual(['/usr/lib/chromium/chromium', '--type=utility', '--x=a b']);
    expect(commandLine('/usr/lib/chromium/chromium --type=renderer --lang=en')).toEqual(['/usr/lib/chromium/chromium', '--type=renderer', '--lang=en']);
  });

  it('the ready table shows the split with shares where it was measured, and no CPU columns where it was not', () => {
    root = mkdtempSync(join(tmpdir(), 'proc-'));
    const cpu = { pageMain: 1, workers: 2, rendererPool: 1.5, other: 0.5, total: 5 };
    const withCpu = lessonReadyTable([
      { lesson: 'turns', ms: 2000, lines: 2, held: 2, cpu },
      { lesson: 'crash', ms: NaN, lines: 0, held: 0, error: 'timed out' },
    ]);
    expect(withCpu).toContain('| turns | 2000 | 2/2 | 5.00 | 1.00 (20 %) | 2.00 (40 %) | 1.50 (30 %) | 0.50 (10 %) |  |');
    expect(withCpu).toContain('renderer thread pool');
    const without = lessonReadyTable([{ lesson: 'turns', ms: 2000, lines: 2, held: 2 }]);
    expect(without).not.toContain('browser CPU');
    expect(without).toContain('median over the lessons 2000 ms');
  });
});
