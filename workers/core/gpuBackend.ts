/**
 * The GPU backend: the update's stages (workers/core/update/stages.ts) as WGSL kernels on buffers
 * that stay on the device. Every buffer, pipeline, uniform and bind group is made once here; a
 * call only rewrites the few uniforms that change (the sampling iteration, Adam's step and lr).
 *
 * Per rollout turn: one command buffer with the rollout policy's first-layer table (embedProject)
 * and actionLen (forward, sample) dispatch pairs, and one readback of the N * actionLen sampled
 * tokens. Per update: one command buffer with every stage's dispatches in one compute pass and one
 * readback of the statistics. Every forward reads the shared [K, V, H] table `proj`; an
 * embedProject dispatch remakes it before each forward whose parameters differ from the ones it
 * was last made from. No DOM APIs: it runs in a page, a worker or Node (Dawn).
 */
import { packTrajIn, packTurnIn } from '../../kernels/advantage/advantage';
import { paramLayout } from '../../kernels/model/mlp';
import { BufferUsage, compileKernels, MapMode } from '../../kernels/pipeline';
import type { SampleConfig } from '../../kernels/softmax/sample';
import { defaultKernelVariant, type KernelVariant } from '../../kernels/selectors';
import { paramStep, type Backend, type BatchTensors, type ModelState, type RunShape, type UpdateCapture, type UpdateInput, type UpdateStats } from './backend';
import { createReadbacks } from './gpuReadback';
import { copyRows } from './rowCopy';
import { createGpuUpdate, type GpuUpdate } from './update/gpuUpdate';
import { ESS_OUT_STRIDE } from '../../kernels/optimizer/essScale';
import { essSlots } from './update/gpuUpdate';
import type { StepRef } from './update/stage';
import { backendPipelines, stagesOf, updateBlocks, walkUpdate, type UpdateBlock } from './update/stages';

export interface GpuBackendOptions {
  /** Adapter description shown to the user. */
  label?: string;
  /**
   * The kernels that have hardware versions run them ('subgroup': logitGrad's subgroup rows, and
   * sample's and tokenStats' above 64 logits; firstLayerGrad's subgroup
   * version; gradNorm's block; stats' spread bins) or the thread ones (kernels/selectors.ts);
   * default defaultKernelVariant(device): the hardware versions on a hardware adapter that has
   * subgroups.
   */
  kernelVariant?: KernelVariant;
}

export function createGpuBackend(device: GPUDevice, shape: RunShape, initialParams: Float32Array, opts: GpuBackendOptions = {}): Backend {
  const { dims } = shape;
  const P = paramLayout(dims).size;
  const label = opts.label ?? 'WebGPU';
  if (initialParams.length !== P) throw new Error(`gpu backend: ${initialParams.length} parameters given, the model has ${P}`);
  if (shape.grammar.length !== dims.V * dims.V) throw new Error(`gpu backend: grammar has ${shape.grammar.length} entries, expected ${dims.V * dims.V}`);
  const owned: GPUBuffer[] = [];
  const g = createGpuUpdate(device, shape, initialParams, opts.kernelVariant ?? defaultKernelVariant(device), label, owned);
  const { b } = g;
  const stages = stagesOf(shape);
  const bound = stages.map((s) => s.gpu(g));
  const io = createReadbacks(g, label, owned);
  const submit = createSubmitter(device);
  const history = createStaleHistory(g, initialParams);
  let adamStep = 0;

  async function snapshot(): Promise<ModelState> {
    // The snapshot staging buffer holds the stats words first; the state follows them.
    return io.decodeState(await submit('snapshot', io.snapshot, (enc) => io.copyState(enc, io.snapshot)), adamStep);
  }

  async function update(collected: UpdateInput): Promise<UpdateStats> {
    // The update's own copy: a host stage (the rollout correction) replaces its mask and weights.
    const inp = { ...collected };
    writeUpdateInputs(g, inp);
    g.host.corrected = null;
    for (const s of bound) s.upload?.(inp, adamStep);
    device.queue.writeBuffer(b.health, 0, new Uint32Array(1));
    const snap = inp.snapshot === true;
    const blocks = inp.capture ? updateBlocks(stages, g.steps, inp) : null;
    const capture = blocks ? await captureUpdate(blocks, inp) : null;
    const visits: Visit[] = [];
    if (blocks) for (const bl of blocks) if (bl.phase === 'finish') visits.push(...bl.stages.map((i): Visit => [i, bl.step]));
    if (!blocks) walkUpdate(stages, g.steps, inp, (i, step) => visits.push([i, step]));
    const bytes = await submitVisits('update', visits, inp, !blocks, io.updateRead(snap), (enc) => {
      history.afterUpdate(enc);
      io.afterUpdate(enc, snap);
    });
    adamStep += g.steps.length;
    const stats = io.decodeUpdate(bytes, g.steps.length, adamStep, snap);
    return capture ? { ...stats, capture } : stats;
  }

  /**
   * Encodes `visits` (stage index, optimizer step) in order into compute passes and submits them:
   * one submit, or, at each host stage, a submit up to it whose readback its `apply` takes before
   * the rest is encoded. `first`: the update starts here (io.beforeUpdate). `tail` records what
   * follows the last pass, `read` is what the last submit maps.
   */
  async function submitVisits(what: string, visits: readonly Visit[], inp: UpdateInput, first: boolean, read: GPUBuffer, tail: (enc: GPUCommandEncoder) => void): Promise<ArrayBuffer> {
    let from = 0;
    const encode = (enc: GPUCommandEncoder, to: number) => {
      if (first) io.beforeUpdate(enc);
      first = false;
      const pass = enc.beginComputePass({ label: `update ${inp.iter}` });
      for (let v = from; v < to; v++) bound[visits[v]![0]]!.encode(pass, inp, visits[v]![1]);
      pass.end();
      from = to;
    };
    for (let v = 0; v < visits.length; v++) {
      const host = bound[visits[v]![0]]!.host;
      if (!host) continue;
      const bytes = await submit(`${what} (before ${stages[visits[v]![0]]!.name})`, host.read, (enc) => {
        encode(enc, v);
        host.copy(enc);
      });
      host.apply(bytes, inp);
      from = v + 1;
    }
    return submit(what, read, (enc) => {
      encode(enc, visits.length);
      tail(enc);
    });
  }

  /** The batch tensors with what host stages computed of them. */
  const withHost = (t: BatchTensors): BatchTensors => (g.host.corrected ? { ...t, ...g.host.corrected } : t);

  // Step-through only: the parameters, the gradient norm and the (ESS, lr factor) slots after a
  // piece of the update, staged on a buffer made at the first capture (a plain run never has it).
  const MB = shape.minibatches.length;
  const essWords = ESS_OUT_STRIDE * essSlots(shape);
  let extrasRead: GPUBuffer | null = null;
  async function readExtras(): Promise<{ params: Float32Array; norm: number; ess: Float32Array }> {
    extrasRead ??= (() => {
      const buf = device.createBuffer({ label: `step-through readback (${label})`, size: 4 * (P + 1 + essWords), usage: BufferUsage.MAP_READ | BufferUsage.COPY_DST });
      owned.push(buf);
      return buf;
    })();
    const read = extrasRead;
    const bytes = await submit('capture extras', read, (enc) => {
      enc.copyBufferToBuffer(b.params, 0, read, 0, 4 * P);
      enc.copyBufferToBuffer(b.norm, 0, read, 4 * P, 4);
      enc.copyBufferToBuffer(b.essOut, 0, read, 4 * (P + 1), 4 * essWords);
    });
    return { params: new Float32Array(bytes, 0, P), norm: new Float32Array(bytes, 4 * P, 1)[0]!, ess: new Float32Array(bytes, 4 * (P + 1), essWords) };
  }

  /**
   * Runs the prepare phase and every optimizer step of `blocks` as submits of their own, each
   * followed by a readback of the batch (and of the parameters, norm and ESS slots); the finish
   * phase is left to the update's last submit. The same dispatches in the same order as one pass.
   */
  async function captureUpdate(blocks: readonly UpdateBlock[], inp: UpdateInput): Promise<UpdateCapture> {
    const piece = async (what: readonly UpdateBlock[], first: boolean) =>
      withHost(io.batch.decode(await submitVisits('capture', what.flatMap((bl) => bl.stages.map((i): Visit => [i, bl.step])), inp, first, io.batch.buffer, io.batch.copy)));
    const prepared = await piece(blocks.filter((bl) => bl.phase === 'prepare'), true);
    let before = (await readExtras()).params;
    const steps: UpdateCapture['steps'] = [];
    for (const bl of blocks) {
      if (!bl.step) continue;
      const tensors = await piece([bl], false);
      const x = await readExtras();
      const slot = ESS_OUT_STRIDE * (shape.essLr.enabled ? MB + bl.step.index : bl.step.minibatch);
      steps.push({ step: bl.step, tensors, gradNorm: x.norm, ess: x.ess[slot]!, lrScale: x.ess[slot + 1]!, params: paramStep(before, x.params) });
      before = x.params;
    }
    return { prepared, steps };
  }

  return {
    kind: 'gpu',
    label,
    ...createTokenIo(g, io.sampled, submit),
    update,
    restore(st: ModelState) {
      for (const [buf, data] of [[b.params, st.params], [b.ref, st.ref], [b.m, st.m], [b.v, st.v]] as const) {
        if (data.length !== P) throw new Error(`restore: state has ${data.length} values, the model has ${P}`);
        device.queue.writeBuffer(buf, 0, data);
      }
      if (shape.critic) device.queue.writeBuffer(b.criticTable, 0, st.critic ?? new Float32Array(shape.critic.size));
      history.restore(st.params);
      adamStep = st.adamStep;
    },
    resetReference() {
      const enc = device.createCommandEncoder({ label: 'reset reference' });
      enc.copyBufferToBuffer(b.params, 0, b.ref, 0, 4 * P);
      device.queue.submit([enc.finish()]);
      const zeros = new Float32Array(P);
      device.queue.writeBuffer(b.m, 0, zeros);
      device.queue.writeBuffer(b.v, 0, zeros);
      adamStep = 0;
    },
    injectNaN() {
      device.queue.writeBuffer(b.params, 0, Float32Array.of(NaN));
    },
    async readParams() {
      return (await snapshot()).params;
    },
    snapshot,
    async readBatch() {
      return withHost(io.batch.decode(await submit('readBatch', io.batch.buffer, (enc) => io.batch.copy(enc))));
    },
    destroy() {
      if (!submit.destroy()) return;
      for (const kernel of Object.values(g.k)) kernel.destroy();
      for (const buf of owned.splice(0)) buf.destroy();
    },
  };
}

/** One stage of an update as walkUpdate visits it: its index in the run's stages, and the optimizer step. */
type Visit = [number, StepRef | null];

type Submit = ((what: string, read: GPUBuffer, encode: (enc: GPUCommandEncoder) => void) => Promise<ArrayBuffer>) & {
  /** Refuses every later call; false if it was already destroyed. */
  destroy(): boolean;
};

/**
 * Submits one command buffer (`encode`'s work) inside a validation scope, then maps `read` and
 * returns a copy of its bytes; refuses a call of a kind still in flight, and any after destroy().
 */
function createSubmitter(device: GPUDevice): Submit {
  let destroyed = false;
  const busy = new Set<string>();
  const submit = async (what: string, read: GPUBuffer, encode: (enc: GPUCommandEncoder) => void): Promise<ArrayBuffer> => {
    if (destroyed) throw new Error(`gpu backend: ${what} after destroy()`);
    if (busy.has(what)) throw new Error(`gpu backend: ${what} called again before the previous call finished`);
    busy.add(what);
    try {
      device.pushErrorScope('validation');
      const enc = device.createCommandEncoder({ label: what });
      encode(enc);
      device.queue.submit([enc.finish()]);
      const err = await device.popErrorScope();
      if (err) throw new Error(`gpu backend: ${what}: ${err.message}`);
      await read.mapAsync(MapMode.READ);
      const bytes = read.getMappedRange().slice(0);
      read.unmap();
      return bytes;
    } finally {
      busy.delete(what);
    }
  };
  return Object.assign(submit, {
    destroy() {
      if (destroyed) return false;
      destroyed = true;
      return true;
    },
  });
}

/**
 * Stale rollouts: the last staleness + 1 parameter versions, kept on the device after each update;
 * the rollouts read the oldest (copied into rollParams). Nothing without staleness.
 */
function createStaleHistory({ device, shape, b, f32 }: GpuUpdate, initialParams: Float32Array) {
  const P = initialParams.length;
  const versions = shape.staleness > 0 ? Array.from({ length: shape.staleness + 1 }, (_, i) => f32(`params history ${i}`, P)) : [];
  for (const v of versions) device.queue.writeBuffer(v, 0, initialParams);
  let updates = 0;
  return {
    afterUpdate(enc: GPUCommandEncoder) {
      if (!versions.length) return;
      // Keep this version; the next rollouts read the one `staleness` updates older.
      enc.copyBufferToBuffer(b.params, 0, versions[updates % versions.length]!, 0, 4 * P);
      enc.copyBufferToBuffer(versions[(updates + 1) % versions.length]!, 0, b.rollParams, 0, 4 * P);
      updates++;
    },
    /** Restarts from `params` (the lag builds up again). */
    restore(params: Float32Array) {
      for (const v of versions.length ? [...versions, b.rollParams] : []) device.queue.writeBuffer(v, 0, params);
    },
  };
}

/**
 * The token sequences on the device: whole writes, a turn's writes, and sampling a turn (one
 * submit, one readback of the N * actionLen sampled tokens). A host shadow of `seq` lets a turn's
 * write be one contiguous range.
 */
function createTokenIo(g: GpuUpdate, read: GPUBuffer, submit: Submit): Pick<Backend, 'writeSequences' | 'sampleTurn' | 'writeTurn'> {
  const { device, shape, b } = g;
  const { N, L, actionLen } = shape;
  const sampled = g.f32('sampled', N * actionLen);
  const rollout = bindRollout(g, sampled);
  const shadow = new Int32Array(N * L);
  return {
    writeSequences(s) {
      if (s.length !== N * L) throw new Error(`writeSequences: ${s.length} tokens, expected ${N * L}`);
      shadow.set(s);
      device.queue.writeBuffer(b.seq, 0, shadow);
    },
    async sampleTurn(turn, iter) {
      if (!(turn >= 0 && turn < shape.maxTurns)) throw new Error(`sampleTurn: turn ${turn} is outside 0..${shape.maxTurns - 1}`);
      const bytes = await submit('sampleTurn', read, (enc) => {
        rollout.encode(enc, turn, iter);
        enc.copyBufferToBuffer(sampled, 0, read, 0, 4 * N * actionLen);
      });
      const out = new Int32Array(bytes);
      for (let a = 0; a < actionLen; a++) {
        const rp = shape.rolloutRowPos[turn * actionLen + a]!;
        for (let n = 0; n < N; n++) shadow[rp[n]!] = out[n * actionLen + a]!;
      }
      return out;
    },
    writeTurn(turn, tokens) {
      const w = actionLen + shape.obsLen;
      if (tokens.length !== N * w) throw new Error(`writeTurn: ${tokens.length} tokens, expected ${N * w}`);
      const start = shape.promptLen + turn * w;
      copyRows(shadow, start, L, tokens, 0, w, w, N);
      // One contiguous write from trajectory 0's turn to the last trajectory's: the positions in
      // between hold what the device already has (the shadow tracks every write and sample).
      const end = (N - 1) * L + start + w;
      device.queue.writeBuffer(b.seq, 4 * start, shadow, start, end - start);
    },
  };
}

/** Checks an update's inputs against the run's shape and writes them into their buffers. */
function writeUpdateInputs({ device, shape, b }: GpuUpdate, inp: UpdateInput): void {
  const { N, L } = shape;
  const R = N * shape.Tp;
  const T = shape.maxTurns;
  const a = inp.adv;
  if (a.reward.length !== N) throw new Error(`update: ${a.reward.length} rewards, expected ${N}`);
  if (inp.mask.length !== R || inp.weights.length !== R) throw new Error(`update: mask and weights need ${R} entries`);
  if (shape.loss.ratio.mode === 'turn' && inp.stageWeights?.length !== T) throw new Error(`update: SeeUPO needs ${T} stage weight arrays`);
  device.queue.writeBuffer(b.trajIn, 0, packTrajIn(a));
  device.queue.writeBuffer(b.turnIn, 0, packTurnIn(a, N, T));
  device.queue.writeBuffer(b.roleRewards, 0, a.roleRewards);
  device.queue.writeBuffer(b.mask, 0, inp.mask);
  if (b.sampledMask !== b.mask) device.queue.writeBuffer(b.sampledMask, 0, inp.mask);
  device.queue.writeBuffer(b.weights, 0, inp.weights);
  b.stageWeights.forEach((buf, i) => device.queue.writeBuffer(buf, 0, inp.stageWeights![i]!));
  if (shape.critic) {
    if (inp.stateKey?.length !== R) throw new Error(`update: PPO needs ${R} state keys`);
    device.queue.writeBuffer(b.stateKey, 0, inp.stateKey);
  }
  if (inp.score) {
    const M = shape.scoreContexts;
    const rows = M * shape.scoreSpan;
    if (!b.score) throw new Error('update: answer contexts given, but this run scores no answers (IGPO is off)');
    if (inp.score.seqs.length !== M * L || inp.score.rows.length !== rows) {
      throw new Error(`update: ${inp.score.seqs.length} context tokens and ${inp.score.rows.length} rows, expected ${M * L} and ${rows}`);
    }
    device.queue.writeBuffer(b.score.seq, 0, inp.score.seqs);
    device.queue.writeBuffer(b.score.rows, 0, inp.score.rows);
  }
}

/**
 * The rollout's calls: one (forward, sample) pair per (turn, slot), over rows s*N .. s*N + N - 1
 * of rolloutRowPos, after the rollout policy's first-layer table.
 */
function bindRollout({ k, b, shape, project }: GpuUpdate, sampled: GPUBuffer) {
  const { dims, N, L, actionLen } = shape;
  const sampleConfig = (s: number, iter: number): SampleConfig => ({
    vocab: dims.V, numRows: N, rowBase: s * N, zBase: 0, outStride: actionLen, outOffset: s % actionLen, seed: shape.seed, iter, sampler: shape.sampler,
  });
  const calls = shape.rolloutRowPos.map((_, s) => ({
    forward: k.forward.bind(
      { params: b.rollParams, proj: b.proj, seq: b.seq, rowPos: b.rolloutRowPos, grammar: b.grammar, h: b.h, z: b.z },
      { dims, seqLen: L, numRows: N, rowBase: s * N, outBase: 0, temperature: shape.temperature },
      `forward rollout ${s}`,
    ),
    sample: k.sample.bind({ z: b.z, rowPos: b.rolloutRowPos, seq: b.seq, sampled }, sampleConfig(s, 0), `sample rollout ${s}`),
  }));
  return {
    encode(enc: GPUCommandEncoder, turn: number, iter: number) {
      const slots = Array.from({ length: actionLen }, (_, a) => turn * actionLen + a);
      for (const s of slots) calls[s]!.sample.update(sampleConfig(s, iter));
      const pass = enc.beginComputePass({ label: `sampleTurn ${turn}` });
      // Made again every turn: an update, restore() or a stale-rollout swap may have changed the
      // rollout policy or left another table in proj.
      k.embedProject.encode(pass, project.rollout);
      for (const s of slots) {
        k.forward.encode(pass, calls[s]!.forward);
        k.sample.encode(pass, calls[s]!.sample);
      }
      pass.end();
    },
  };
}

/**
 * createGpuBackend inside out-of-memory and validation error scopes: an allocation the device
 * cannot make becomes an Error that says so (with the sizes), never a half-built backend.
 */
export async function openGpuBackend(
  device: GPUDevice,
  shape: RunShape,
  initialParams: Float32Array,
  opts: GpuBackendOptions = {},
): Promise<Backend> {
  // Every pipeline the backend binds, side by side and checked (KernelCompileError names each
  // broken kernel's file and line); its binds then find them in the cache.
  await compileKernels(device, backendPipelines(shape, opts.kernelVariant ?? defaultKernelVariant(device)));
  device.pushErrorScope('out-of-memory');
  device.pushErrorScope('validation');
  let backend: Backend | null = null;
  let thrown: unknown = null;
  try {
    backend = createGpuBackend(device, shape, initialParams, opts);
  } catch (e) {
    thrown = e;
  }
  const validation = await device.popErrorScope();
  const oom = await device.popErrorScope();
  if (thrown) throw thrown;
  if (oom || validation) {
    backend?.destroy();
    const rows = shape.N * shape.Tp;
    const what = oom ? 'out of GPU memory' : `rejected by the device (${validation!.message})`;
    throw new Error(
      `gpu backend: allocating buffers for ${shape.N} trajectories x ${shape.Tp} policy tokens (${rows} rows, ` +
        `vocabulary ${shape.dims.V}, hidden ${shape.dims.H}) was ${what}; use a smaller batch or model`,
    );
  }
  return backend!;
}
