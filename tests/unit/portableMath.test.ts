/**
 * portablePow (workers/core/envs/portableMath.ts): close to Math.pow over the noise curriculum's range,
 * and the same double as the recipe's Python (toyenv/search.py portable_pow) for every input tried.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { portablePow } from '../../workers/core/envs/portableMath';

const hasPython = spawnSync('python3', ['--version']).status === 0;
const BASES = [1.5, 2, 4, 10, 37.3, 100];
const STEPS = 1000;

describe('portablePow', () => {
  it('is within a few units in the last place of Math.pow for b in [1.5, 100], x in [0, 1]', () => {
    let worst = 0;
    for (const b of BASES) for (let i = 0; i <= STEPS; i++) worst = Math.max(worst, Math.abs(portablePow(b, i / STEPS) / Math.pow(b, i / STEPS) - 1));
    expect(worst).toBeLessThan(2e-15);
    expect([portablePow(4, 0), portablePow(1, 0.37), portablePow(4, 0.5)]).toEqual([1, 1, expect.closeTo(2, 15)]);
  });

  it.skipIf(!hasPython)(hasPython ? "gives Python's portable_pow bit for bit (6,006 inputs)" : 'SKIPPED: python3 not on PATH', () => {
    const py = [
      'import json, sys',
      `sys.path.insert(0, ${JSON.stringify(join(import.meta.dirname, '../../workers/formats/recipe/py'))})`,
      'from toyenv.search import portable_pow',
      `print(json.dumps([portable_pow(b, i / ${STEPS}) for b in ${JSON.stringify(BASES)} for i in range(${STEPS + 1})]))`,
    ].join('\n');
    const run = spawnSync('python3', ['-c', py], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    const got = JSON.parse(run.stdout) as number[];
    const want = BASES.flatMap((b) => Array.from({ length: STEPS + 1 }, (_, i) => portablePow(b, i / STEPS)));
    expect(got.filter((v, k) => v !== want[k]).length).toBe(0);
  });
});
