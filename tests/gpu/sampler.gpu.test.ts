/**
 * The sampler that is not the trainer on the GPU (kernels/softmax/sampler.ts, precision.wgsl,
 * samplerDist.wgsl, and the sampler paths of sample*.wgsl and tokenStats*.wgsl) against the CPU
 * references, in every layout the selector can pick (thread, unrolled, subgroup).
 *
 * Tolerances:
 * - precision.wgsl's rounding: bit for bit. It is integer arithmetic on the f32 bits, so there is
 *   no rounding of its own to allow for.
 * - sample: tokens exactly, as tests/gpu/sample.gpu.test.ts. The kept set is decided by comparing
 *   the f32 mass above a token with p times the f32 top-k mass, and the CDF by f32 sums; both are
 *   within ~1e-7 relative of the float64 reference, so a token can differ only where a uniform or
 *   a nucleus boundary falls within 1e-7 of an edge, which these fixed seeds do not hit. Exact
 *   ties (the boundary tests) are equal in f32 as in float64, so they are decided the same way.
 * - tokenStats: the existing tokenStats tolerance, atol = 1e-5 + 1e-6 max|z|, rtol = 1e-4 +
 *   1e-6 max|z|: the sampler's log-prob is the same shifted log-sum-exp over fewer terms.
 * - between layouts: bit for bit, since every layout runs the same sampler functions on the row.
 */
import { describe, expect, it } from 'vitest';
import { commonWGSL } from '../../kernels/pipeline';
import { MASKED_LOGIT } from '../../kernels/model/mlp';
import { sampleCpu, sampleKernels } from '../../kernels/softmax/sample';
import { roundBf16, roundFp16, SAMPLER_OFF, samplerKept, samplerRow, type SamplerOptions } from '../../kernels/softmax/sampler';
import { tokenStatsCpu, tokenStatsKernels } from '../../kernels/softmax/tokenStats';
import precisionWGSL from '../../kernels/softmax/precision.wgsl?raw';
import type { RowLayout } from '../../kernels/selectors';
import { createRng } from '../../workers/core/rng';
import { compareClose, expectClose, expectEqualArrays } from '../helpers/expectClose';
import { dispatch, Scratch } from '../../kernels/selftest/harness';
import { maxAbsLogit } from '../../kernels/selftest/fixtures';
import { withValidation } from '../helpers/validation';
import { requireFeature, requireGpu } from '../helpers/requireGpu';

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const bitsOf = (x: number) => {
  f32[0] = x;
  return u32[0]!;
};

describe('precision.wgsl rounds the f32 bits as roundBf16 and roundFp16', () => {
  it('on edges, ties, subnormals, overflow and random bit patterns', async () => {
    const device = await requireGpu();
    const rng = createRng(3);
    const edges = [
      0, 0x80000000, 0x3f800000, 0x3f808000, 0x3f818000, 0x3f808001, 0x40490fdb, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000,
      0x7fc00000, 0x000116c2, 0x00018000, 0x00000001, 0x477fe000, 0x477fefff, 0x477ff000, 0x47c35000, 0xc7c35000, 0x33800000,
      0x33000000, 0x33c00000, 0x34200000, 0x387fc000, 0x38800000, 0x3dcccccd, bitsOf(MASKED_LOGIT), bitsOf(1e-6), bitsOf(-3e-5),
    ];
    const inputs = [...edges];
    // Random patterns over the whole range, then over fp16's (2^-25 .. 2^17), then exact bf16 and fp16 ties.
    // Logits are never NaN, and a NaN's payload need not survive a trip through a JS number.
    for (let i = 0; i < 4000; i++) {
      const b = Math.floor(rng.next() * 2 ** 32) >>> 0;
      if ((b & 0x7f800000) !== 0x7f800000 || (b & 0x7fffff) === 0) inputs.push(b);
    }
    for (let i = 0; i < 4000; i++) inputs.push((0x33000000 + Math.floor(rng.next() * (0x48000000 - 0x33000000))) | (rng.next() < 0.5 ? 0x80000000 : 0));
    for (let i = 0; i < 500; i++) inputs.push(((Math.floor(rng.next() * 0x7f7f) << 16) | 0x8000) >>> 0);
    for (let i = 0; i < 500; i++) inputs.push(((0x38800000 + (Math.floor(rng.next() * 0xf000) << 13)) | 0x1000) >>> 0);
    const n = inputs.length;
    const code = `${commonWGSL}\n${precisionWGSL}
@group(0) @binding(0) var<storage, read> inp: array<u32>;
@group(0) @binding(1) var<storage, read_write> outp: array<vec2u>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3u) {
  if (id.x >= arrayLength(&inp)) { return; }
  let x = bitcast<f32>(inp[id.x]);
  outp[id.x] = vec2u(bitcast<u32>(roundBf16(x)), bitcast<u32>(roundFp16(x)));
}`;
    const out = await withValidation(device, async () => {
      const g = new Scratch(device);
      const module = device.createShaderModule({ code });
      const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
      const inBuf = g.upload(Uint32Array.from(inputs));
      const outBuf = g.empty(2 * n);
      const bg = device.createBindGroup({
        layout: pipeline.getBindGroupLayout(0),
        entries: [{ binding: 0, resource: { buffer: inBuf, size: 4 * n } }, { binding: 1, resource: { buffer: outBuf } }],
      });
      const enc = device.createCommandEncoder();
      const pass = enc.beginComputePass();
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, bg);
      pass.dispatchWorkgroups(Math.ceil(n / 64));
      pass.end();
      device.queue.submit([enc.finish()]);
      const r = await g.readU32(outBuf, 2 * n);
      g.destroy();
      return r;
    });
    const want = new Uint32Array(2 * n);
    for (let i = 0; i < n; i++) {
      u32[0] = inputs[i]!;
      const x = f32[0]!;
      want[2 * i] = bitsOf(roundBf16(x));
      want[2 * i + 1] = bitsOf(roundFp16(x));
    }
    // NaN payloads pass through unchanged in both; compare the bits.
    expectEqualArrays(out, want, 'rounded bits (bf16, fp16 interleaved)');
  });
});

/** Rows of V logits: random ones, and the extremes the header names, with a sampled token each. */
function samplerInput(rows: number, V: number, seed: number) {
  const rng = createRng(seed);
  const z = new Float32Array(rows * V);
  const seq = new Int32Array(2 * rows + 2);
  const rowPos = Uint32Array.from({ length: rows }, (_, r) => 2 * r + 1);
  for (let r = 0; r < rows; r++) {
    const kind = r % 8;
    const keep = rng.int(V);
    for (let v = 0; v < V; v++) {
      let x: number;
      if (kind === 1) x = rng.next() < 0.5 ? 1e4 : -1e4 * rng.next(); // f32 ulps of 1e-3; fp16's of 8
      else if (kind === 2) x = rng.next() < 0.3 ? 6.55e4 + 1e4 * rng.next() : rng.normal(); // fp16 overflow: saturates into ties
      else if (kind === 3) x = [Math.log(4), Math.log(2), 0, 0][v % 4]!; // ties at the top-p boundaries 1/2, 3/4
      else if (kind === 4) x = 3e-5 * rng.normal(); // fp16 subnormals
      else if (kind === 5) x = 0.25; // one tie block: top-p keeps it whole
      else x = 2 * rng.normal();
      const masked = kind === 6 ? v !== keep : v !== keep && kind !== 3 && kind !== 5 && rng.next() < 0.3;
      z[r * V + v] = masked ? MASKED_LOGIT : x;
    }
    const allowed: number[] = [];
    for (let v = 0; v < V; v++) if (z[r * V + v] !== MASKED_LOGIT) allowed.push(v);
    seq[rowPos[r]!] = allowed[rng.int(allowed.length)]!;
  }
  return { z, V, seq, rowPos, rows };
}
type SamplerInput = ReturnType<typeof samplerInput>;

const OPTION_SETS: Array<Partial<SamplerOptions>> = [
  { precision: 'bf16' },
  { precision: 'fp16' },
  { topK: 3 },
  { topK: 1000 },
  { topP: 0.9 },
  { topP: 0.6 },
  { precision: 'bf16', topK: 5, topP: 0.5 },
  { precision: 'fp16', topP: 0.3 },
];
const optsOf = (o: Partial<SamplerOptions>): SamplerOptions => ({ ...SAMPLER_OFF, ...o });
const nameOf = (o: Partial<SamplerOptions>) => Object.entries(o).map(([k, v]) => `${k}=${v}`).join(' ');

async function runSampler(layout: RowLayout, c: SamplerInput, sampler: SamplerOptions, seed: number, iter: number) {
  const device = await requireGpu();
  const sk = sampleKernels[layout];
  const tk = tokenStatsKernels[layout];
  if (sk.requires) requireFeature(device, sk.requires);
  return withValidation(device, async () => {
    const g = new Scratch(device);
    const ks = sk.create(device);
    const kt = tk.create(device);
    const z = g.upload(c.z);
    const rowPos = g.upload(c.rowPos);
    const seqOut = g.upload(new Uint32Array(c.seq.length));
    const sampled = g.upload(new Uint32Array(c.rows));
    const [logp, entropy, sumP2] = [g.empty(c.rows), g.empty(c.rows), g.empty(c.rows)];
    dispatch(device, [
      [ks, ks.bind({ z, rowPos, seq: seqOut, sampled }, { vocab: c.V, numRows: c.rows, seed, iter, sampler })],
      [kt, kt.bind({ z, seq: g.upload(c.seq), rowPos, logp, entropy, sumP2 }, { vocab: c.V, numRows: c.rows, sampler })],
    ]);
    const out = {
      tokens: await g.readU32(sampled, c.rows),
      logp: await g.readF32(logp, c.rows),
      entropy: await g.readF32(entropy, c.rows),
      sumP2: await g.readF32(sumP2, c.rows),
    };
    g.destroy();
    ks.destroy();
    kt.destroy();
    return out;
  });
}

function checkAgainstCpu(layout: RowLayout, c: SamplerInput, sampler: SamplerOptions, out: Awaited<ReturnType<typeof runSampler>>, seed: number, iter: number, name: string) {
  const cpuSeq = new Int32Array(c.seq.length);
  sampleCpu(c.z, c.V, c.rowPos, cpuSeq, seed, iter, sampler);
  expectEqualArrays(out.tokens, Int32Array.from(c.rowPos, (p) => cpuSeq[p]!), `${layout} tokens ${name}`);
  for (let r = 0; r < c.rows; r++) {
    const d = samplerRow(c.z, r * c.V, c.V, sampler);
    expect(samplerKept(d, out.tokens[r]!), `${layout} ${name}: row ${r} drew ${out.tokens[r]}, outside the kept set`).toBe(true);
  }
  const ref = tokenStatsCpu(c.z, c.V, c.seq, c.rowPos, undefined, sampler);
  for (const key of ['logp', 'entropy', 'sumP2'] as const) {
    expect(out[key].every(Number.isFinite), `${layout} ${key} finite ${name}`).toBe(true);
    // Each row at the tolerance of its own largest logit: the rows of 1e4 would otherwise set it for all.
    let worst = 0;
    for (let r = 0; r < c.rows; r++) {
      const s = maxAbsLogit(c.z.subarray(r * c.V, (r + 1) * c.V));
      const { bad, maxAbs } = compareClose([out[key][r]!], [ref[key][r]!], { atol: 1e-5 + 1e-6 * s, rtol: 1e-4 + 1e-6 * s });
      expect(bad, `${layout} ${key} ${name}: row ${r} got ${out[key][r]}, expected ${ref[key][r]} (max |logit| ${s})`).toBe(0);
      worst = Math.max(worst, maxAbs);
    }
    console.info(`[close] ${layout} ${key} ${name}: max |err| ${worst.toExponential(2)}`);
  }
}

for (const layout of ['thread', 'unrolled', 'subgroup'] as const) {
  describe(`sample and tokenStats with sampler options (${layout}) match the CPU references`, () => {
    for (const o of OPTION_SETS) {
      it(nameOf(o), async () => {
        const c = samplerInput(160, 19, 41);
        const sampler = optsOf(o);
        checkAgainstCpu(layout, c, sampler, await runSampler(layout, c, sampler, 77, 3), 77, 3, nameOf(o));
      });
    }
    const vocabs = layout === 'unrolled' ? [4, 64] : [4, 130];
    for (const V of vocabs) {
      it(`vocab ${V}`, async () => {
        const c = samplerInput(48, V, V);
        const sampler = optsOf({ precision: 'bf16', topK: 7, topP: 0.8 });
        checkAgainstCpu(layout, c, sampler, await runSampler(layout, c, sampler, 5, V), 5, V, `V=${V}`);
      });
    }
  });
}

describe('the sampler path gives the same bits in every layout', () => {
  it('thread, unrolled and subgroup', async () => {
    const c = samplerInput(100, 23, 8);
    const sampler = optsOf({ precision: 'fp16', topK: 6, topP: 0.85 });
    const [t, un, sg] = [await runSampler('thread', c, sampler, 9, 1), await runSampler('unrolled', c, sampler, 9, 1), await runSampler('subgroup', c, sampler, 9, 1)];
    for (const key of ['tokens', 'logp', 'entropy', 'sumP2'] as const) {
      const bits = (x: Float32Array | Uint32Array) => new Uint32Array(x.buffer, x.byteOffset, x.length);
      expectEqualArrays(bits(un[key]), bits(t[key]), `unrolled ${key}`);
      expectEqualArrays(bits(sg[key]), bits(t[key]), `subgroup ${key}`);
    }
  });
});

describe('the sampler differs from the trainer exactly when its options say so', () => {
  it('default options leave the trainer distribution; bf16 moves the log-probs of rows whose logits it rounds', async () => {
    const c = samplerInput(64, 19, 12);
    const plain = await runSampler('thread', c, SAMPLER_OFF, 4, 2);
    const bf16 = await runSampler('thread', c, optsOf({ precision: 'bf16' }), 4, 2);
    const trainer = tokenStatsCpu(c.z, c.V, c.seq, c.rowPos);
    const s = maxAbsLogit(c.z);
    expectClose(plain.logp, trainer.logp, { atol: 1e-5 + 1e-6 * s, rtol: 1e-4 + 1e-6 * s });
    // Random normal logits have 24 significant bits; bf16 keeps 8, so nearly every row moves.
    let moved = 0;
    for (let r = 0; r < c.rows; r++) if (Math.abs(bf16.logp[r]! - trainer.logp[r]!) > 1e-4) moved++;
    expect(moved).toBeGreaterThan(c.rows / 2);
  });
});
