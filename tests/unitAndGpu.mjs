// `npm test`'s middle step: the unit tests and the GPU kernel tests at the same time, as two
// processes. The kernel tests run one file at a time in one headless Chromium and keep about one
// core busy, so on a 2-core machine the unit tests' two workers fill the rest: 345 s for both
// against 419 s (203 + 216) one after the other, here. (One vitest process cannot do it: projects
// with different worker counts run one after the other.)
//
// The unit tests print as they run; the kernel tests' output is held and printed whole after them,
// so neither log is cut into the other. Exits 0 only if both passed.
import { spawn } from 'node:child_process';

const STEPS = [
  { name: 'unit', args: ['run', '-s', 'test:unit'] },
  { name: 'gpu', args: ['run', '-s', 'test:gpu'] },
];
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const t0 = Date.now();

const children = STEPS.map((step, i) => {
  const live = i === 0;
  const held = [];
  const child = spawn(npm, step.args, { stdio: ['ignore', 'pipe', 'pipe'] });
  for (const [from, to] of [[child.stdout, process.stdout], [child.stderr, process.stderr]]) {
    from.on('data', (d) => (live ? to.write(d) : held.push([to, d])));
  }
  const done = new Promise((resolve) => {
    child.on('error', (e) => resolve({ step, code: 1, s: 0, error: e.message }));
    child.on('close', (code, signal) => resolve({ step, code: code ?? (signal ? 1 : 0), s: (Date.now() - t0) / 1000, held }));
  });
  return { child, done };
});

const stop = (signal) => {
  for (const { child } of children) child.kill(signal);
  process.exit(1);
};
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));

const results = [];
for (const { done } of children) {
  const r = await done;
  for (const [to, d] of r.held ?? []) to.write(d);
  results.push(r);
}
for (const r of results) {
  const what = r.error ? `could not start: ${r.error}` : r.code === 0 ? 'passed' : `failed (exit ${r.code})`;
  console.log(`test:${r.step.name} ${what} in ${r.s.toFixed(0)} s`);
}
process.exit(results.every((r) => r.code === 0) ? 0 : 1);
