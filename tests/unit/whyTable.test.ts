/**
 * The docs tables of "why each method exists" (cli/whyTable.ts) from the CLI's JSON: the summary's
 * count, the cells, the methods not shown with their failing rows and entries, and the section
 * rewritten in place between its markers.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { notShown, whyTables, writeWhySection, type WhyJson } from '../../cli/whyTable';
import type { WhyRowResult } from '../../cli/whySummary';
import { WHY_ROUNDS, whyIds, whyOf } from '../../workers/content/why';

const row = (mean: number, holds: boolean): WhyRowResult => ({
  label: 'success, mean of iterations 1-2',
  metric: 'success_rate',
  window: { from: 1, to: 2, agg: 'mean' },
  dir: 1,
  margin: 0.1,
  a: { run: 'cure', label: 'A', mean: 0.5 + mean, perSeed: [] },
  b: { run: 'sick', label: 'B', mean: 0.5, perSeed: [] },
  diff: { n: 8, mean, lo: mean - 0.05, hi: mean + 0.05 },
  holds,
});
const json = (method: string, cure: boolean): WhyJson => ({
  method,
  found: true,
  seeds: [1, 2, 3, 4, 5, 6, 7, 8],
  iters: 2,
  disease: row(0.3, true),
  cure: row(cure ? 0.3 : 0.01, cure),
  crashes: { healthy: 0, sick: 1, cure: 0 },
});

describe('cli/whyTable.ts', () => {
  it('counts a method shown only when all four rows hold, and lists the others with the rows that failed', () => {
    const main = { cm2: json('cm2', true), dapo: json('dapo', true), dars: json('dars', false) };
    const held = { cm2: json('cm2', true), dapo: json('dapo', false) };
    const text = whyTables(main, held);
    expect(text).toContain(`Shown on both seed sets: **1 of ${whyIds().length}**`);
    // Each round's held-out seeds: from the results where a method of the round has them, else the round's draw.
    const four = WHY_ROUNDS[4].heldOut.length ? WHY_ROUNDS[4].heldOut.join(', ') : '(not run)';
    expect(text).toContain(`round one 1, 2, 3, 4, 5, 6, 7, 8; round two 88038, 93664, 5308, 42588, 63291, 83508, 22498, 70308; round four ${four}.`);
    expect(text).toMatch(/\| CM2 \(cm2\) \| GRPO \| 1 \| yes \| ✓ \| ✓ \| ✓ \| ✓ \| \*\*yes\*\* \|/);
    expect(text).toContain('0.500 → 0.800, +0.300 [+0.250, +0.350] ✓');
    expect(text).toContain('| dars | 0 / 1 / 0 of 8 | not run |');
    const ns = notShown(main, held).join('\n');
    expect(ns).toContain('**DAPO** (dapo): cure, held-out +0.010 [−0.040, +0.060] against ≥ +0.12.');
    expect(ns).toMatch(/\*\*DARS\*\* \(dars\): disease, held-out not run; cure, seeds 1-8 \+0.010 .*; cure, held-out not run\./);
    // A method with no disease found on the dev seeds carries what was tried.
    const none = whyIds().find((id) => !whyOf(id)!.found)!;
    expect(ns).toContain(whyOf(none)!.tried!.slice(0, 60));
    expect(ns).not.toContain('**CM2**');
  });

  it('rewrites the section between its markers and keeps the rest of the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'whytable-'));
    try {
      const f = join(dir, 'R.md');
      writeFileSync(f, 'before\n<!-- why:begin -->\nold\n<!-- why:end -->\nafter\n');
      writeWhySection(f, 'new body');
      writeWhySection(f, 'newer body');
      const text = readFileSync(f, 'utf8');
      expect(text.startsWith('before\n<!-- why:begin')).toBe(true);
      expect(text).toContain('newer body\n<!-- why:end -->\nafter\n');
      expect(text).not.toContain('old');
      expect(text).not.toContain('new body');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
