/**
 * The selector table (kernels/selectors.ts): every option of a stage is what some variant and
 * shape picks, every kernel an option names is in kernels/all.ts (compiled by the compilation
 * check) and every pipeline it dispatches has self-test cases, so `?selftest` covers every
 * pipeline a backend can bind; and every row names its measurement.
 */
import { describe, expect, it } from 'vitest';
import { ALL_OPS } from '../../kernels/all';
import { CONFIG_SELECTORS, KERNEL_SELECTORS, type KernelVariant, type Selector, type SelectorShape } from '../../kernels/selectors';
import { SELF_TEST_CASES } from '../../kernels/selftest';

const VARIANTS: readonly KernelVariant[] = ['thread', 'subgroup'];
/** Vocabularies around the unrolled kernels' 64 and groups around advantage's compiled-in 2..64. */
const SHAPES: SelectorShape[] = [1, 19, 64, 65, 130].flatMap((vocab) => [1, 2, 8, 64, 65].map((group) => ({ vocab, group })));

const picks = <T>(s: Selector<T>): T[] => VARIANTS.flatMap((v) => SHAPES.map((shape) => s.pick(v, shape)));

type Op = { label: string; kernels?: readonly { label: string }[] };
const pipelineLabels = (op: Op): string[] => (op.kernels ? op.kernels.map((k) => k.label) : [op.label]);

describe('the kernel selector table', () => {
  const rows = Object.entries(KERNEL_SELECTORS) as Array<[string, Selector<Op>]>;

  it('picks one of its options for every variant and shape, and every option is picked by some', () => {
    for (const [stage, row] of rows) {
      const picked = new Set(picks(row));
      for (const p of picked) expect(row.options, `${stage}: ${p.label} is not among its options`).toContain(p);
      for (const o of row.options) expect(picked.has(o), `${stage}: no variant or shape picks ${o.label}`).toBe(true);
    }
  });

  it('names the measurement of every row', () => {
    for (const [stage, row] of [...rows, ...Object.entries(CONFIG_SELECTORS)] as Array<[string, { measured: string }]>) {
      expect(row.measured.length, stage).toBeGreaterThan(10);
    }
  });

  it('lists in kernels/all.ts exactly the kernels the table can pick', () => {
    const options = new Set(rows.flatMap(([, row]) => row.options));
    for (const o of options) expect(ALL_OPS as readonly unknown[], `${o.label} is missing from ALL_OPS`).toContain(o);
    // ALL_OPS also lists gradNorm and adam, the optimizer step's parts, for the kernel benchmark.
    const bound = new Set([...options].flatMap(pipelineLabels));
    for (const op of ALL_OPS) expect(pipelineLabels(op).filter((l) => !bound.has(l)), `${op.label} in ALL_OPS runs in no stage`).toEqual([]);
  });

  it('has self-test cases for every pipeline an option dispatches', () => {
    const covered = new Set(SELF_TEST_CASES.flatMap((c) => [c.kernel, ...(c.uses ?? [])]).map((k) => k.label));
    const missing = rows.flatMap(([, row]) => row.options.flatMap(pipelineLabels)).filter((label) => !covered.has(label));
    expect(missing).toEqual([]);
  });
});

describe('the configuration selectors', () => {
  it('pick among their options; the two-valued ones take both', () => {
    for (const [name, row] of Object.entries(CONFIG_SELECTORS) as Array<[string, Selector<number | boolean>]>) {
      const picked = new Set(picks(row));
      for (const p of picked) expect(row.options, `${name}: ${p}`).toContain(p);
      if (row.options.length === 2) expect(picked.size, name).toBe(2);
    }
  });
  it("compile advantage's group size in only in the subgroup variant, for groups of 2 to 64", () => {
    const pick = (v: KernelVariant, group: number) => CONFIG_SELECTORS.advantageGroupSize.pick(v, { vocab: 19, group });
    expect([1, 2, 8, 64, 65].map((g) => pick('subgroup', g))).toEqual([0, 2, 8, 64, 0]);
    expect([1, 2, 8, 64, 65].map((g) => pick('thread', g))).toEqual([0, 0, 0, 0, 0]);
  });
});
