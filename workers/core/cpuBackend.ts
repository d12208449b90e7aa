/**
 * The CPU backend: the update's stages (workers/core/update/stages.ts), each by its kernels'
 * TypeScript reference, except the model's backward pass, which runs as WebAssembly where the
 * engine allows it (kernels/model/wasm/: the same bits as backwardCpu).
 * It is the fallback where WebGPU is missing and the oracle in tests.
 */
import { forwardCpu, paramLayout, projTable, rowMemo, type ProjTable, type RowMemo } from '../../kernels/model/mlp';
import { wasmAvailable } from '../../kernels/model/wasm/engine';
import { sampleCpu } from '../../kernels/softmax/sample';
import { essOfUpdate, paramStep, rolloutLogprobsApart, type Backend, type ModelState, type RunShape, type UpdateCapture, type UpdateInput, type UpdateStats } from './backend';
import { countText } from './numberText';
import { copyRows } from './rowCopy';
import { copyTensors, cpuTensors, startCpuUpdate } from './update/cpuUpdate';
import { updateStepRefs } from './update/stage';
import { stagesOf, updateBlocks, walkUpdate, type UpdateBlock } from './update/stages';
import type { CpuUpdate } from './update/cpuUpdate';

export interface CpuBackendOptions {
  /**
   * Called between the stages of an iteration (each forward, backward and optimizer step) and
   * every 1,024 rows inside the forward and backward loops. Nothing yields meanwhile, so this is
   * the one way to tell the page the worker is not hung.
   */
  progress?: () => void;
  /** Refuse a run whose per-row arrays would take more (default CPU_BACKEND_MAX_BYTES). */
  maxBytes?: number;
}

/**
 * The CPU backend's name in the page and in run files: it says whether the backward pass runs as
 * WebAssembly (kernels/model/wasm/), which a host's Content-Security-Policy can refuse
 * (the numbers are the same either way; only the speed differs).
 */
export function cpuBackendLabel(): string {
  return wasmAvailable() ? 'CPU (TypeScript reference kernels; the backward pass as WebAssembly)' : 'CPU (TypeScript reference kernels)';
}

/** The most the CPU backend's per-row arrays may take (cpuBackendBytes); a browser tab over it swaps or fails. */
export const CPU_BACKEND_MAX_BYTES = 4 * 2 ** 30;

/**
 * Peak bytes of an update's per-row arrays on the CPU backend: the old policy's forward (h and z,
 * kept through the update) beside the reference's (until the collector takes it), a stale
 * rollout policy's, a later optimizer step's fresh forward, logit and hidden gradients of a
 * minibatch, and the batch's own row tensors. At 1,024 prompts x 64 rollouts and 512 hidden units,
 * 3.8 GB; Node's whole process peaked at 4.1 GB there.
 */
export function cpuBackendBytes(shape: RunShape): number {
  const { H, V } = shape.dims;
  const R = shape.N * shape.Tp;
  const Rm = Math.max(...shape.minibatches.map(([n0, n1]) => (n1 - n0) * shape.Tp));
  const forwards = 2 + (rolloutLogprobsApart(shape) ? 1 : 0) + (shape.minibatches.length > 1 || shape.epochs > 1 ? 1 : 0);
  return 4 * (forwards * R * (H + V + 1) + Rm * (H + V) + 16 * R + shape.scoreContexts * (H + V + 1));
}

/** A run too big for the CPU backend's memory budget (`maxBytes`), refused before allocating. */
export class CpuMemoryError extends Error {
  constructor(
    message: string,
    readonly bytes: number,
    readonly maxBytes: number,
  ) {
    super(message);
    this.name = 'CpuMemoryError';
  }
}

/** Refuses a run whose per-row arrays would take more than the budget, saying what to make smaller. */
function checkCpuMemory(shape: RunShape, maxBytes: number): void {
  const bytes = cpuBackendBytes(shape);
  if (bytes <= maxBytes) return;
  const gib = (b: number) => (b < 2 ** 30 ? `${Math.ceil(b / 2 ** 20)} MiB` : `${(b / 2 ** 30).toFixed(1)} GiB`);
  throw new CpuMemoryError(
    `cpu backend: ${countText(shape.N)} rollouts of ${shape.Tp} training rows with ${countText(shape.dims.H)} hidden units need about ` +
      `${gib(bytes)} for their activations and gradients, over the CPU backend's ${gib(maxBytes)}; use fewer prompts, ` +
      `a smaller group, fewer turns or fewer hidden units (the GPU backend keeps them in GPU memory)`,
    bytes,
    maxBytes,
  );
}

/**
 * The first layer's table (projTable) and the rows computed so far (rowMemo) per parameter
 * array, kept until its parameters change: rollouts run several forwards per iteration with the
 * same policy, the old-policy pass then reads the rollout's rows again, and the reference changes
 * only on a reset. `changed()` is called on every write to params, ref or the rollout history; it
 * does not say which, so an array's table and rows are then kept only if the parameters they were
 * made from are still the same bits (the table reads only the embeddings and W1): the reference's
 * last the run instead of one iteration.
 */
function projectionCache(dims: RunShape['dims']) {
  const { emb, b1 } = paramLayout(dims);
  let version = 0;
  const tables = new WeakMap<Float32Array, { version: number; proj: ProjTable; memo: RowMemo; from: Int32Array }>();
  return {
    of(p: Float32Array): { proj: ProjTable; memo: RowMemo } {
      const hit = tables.get(p);
      if (hit?.version === version) return hit;
      const now = new Int32Array(p.buffer, p.byteOffset, p.length);
      if (hit && sameBits(hit.from, now, emb, b1)) {
        if (!sameBits(hit.from, now, 0, emb) || !sameBits(hit.from, now, b1, now.length)) {
          hit.memo = rowMemo();
          hit.from = Int32Array.from(now);
        }
        hit.version = version;
        return hit;
      }
      const table = { version, proj: projTable(p, dims), memo: rowMemo(), from: Int32Array.from(now) };
      tables.set(p, table);
      return table;
    },
    changed() {
      version++;
    },
  };
}

function sameBits(a: Int32Array, b: Int32Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The model and optimizer state of a CPU run, with the parameter versions stale rollouts read
 * (the oldest of the last staleness + 1) and PPO's critic table (zeros: no value known yet).
 * `changed` is told of every write to parameters, so cached first-layer tables are remade.
 */
function cpuModel(shape: RunShape, initialParams: Float32Array, changed: () => void) {
  const P = initialParams.length;
  const model = {
    params: Float32Array.from(initialParams),
    ref: Float32Array.from(initialParams),
    m: new Float32Array(P),
    v: new Float32Array(P),
    adamStep: 0,
    critic: shape.critic ? new Float32Array(shape.critic.size) : null,
    history: [Float32Array.from(initialParams)],
    rolloutParams: () => (shape.staleness > 0 ? model.history[0]! : model.params),
    /** After an update: this version joins the history. */
    keepVersion() {
      if (shape.staleness === 0) return;
      model.history.push(Float32Array.from(model.params));
      if (model.history.length > shape.staleness + 1) model.history.shift();
    },
    snapshot: (): ModelState => ({
      params: Float32Array.from(model.params),
      ref: Float32Array.from(model.ref),
      m: Float32Array.from(model.m),
      v: Float32Array.from(model.v),
      adamStep: model.adamStep,
      ...(model.critic ? { critic: Float32Array.from(model.critic) } : {}),
    }),
    restore(st: ModelState) {
      changed();
      if (model.critic) model.critic.set(st.critic ?? new Float32Array(model.critic.length));
      model.params.set(st.params);
      model.history = [Float32Array.from(st.params)];
      model.ref.set(st.ref);
      model.m.set(st.m);
      model.v.set(st.v);
      model.adamStep = st.adamStep;
    },
    /** ProRL: the reference becomes the current policy; Adam restarts. */
    resetReference() {
      changed();
      model.ref.set(model.params);
      model.m.fill(0);
      model.v.fill(0);
      model.adamStep = 0;
    },
  };
  return model;
}

export function createCpuBackend(shape: RunShape, initialParams: Float32Array, opts: CpuBackendOptions = {}): Backend {
  const progress = opts.progress ?? (() => {});
  checkCpuMemory(shape, opts.maxBytes ?? CPU_BACKEND_MAX_BYTES);
  const { dims, N, L } = shape;
  const t = cpuTensors(shape);
  const seq = t.seq;
  const proj = projectionCache(dims);
  const model = cpuModel(shape, initialParams, proj.changed);
  const forward = (p: Float32Array, rowPos: Uint32Array, tokens: Int32Array | Uint32Array = seq) => {
    const table = proj.of(p);
    return forwardCpu(p, dims, tokens, L, rowPos, shape.grammar, shape.temperature, table.proj, progress, table.memo);
  };
  const stages = stagesOf(shape);
  const steps = updateStepRefs(shape);

  function update(collected: UpdateInput): UpdateStats {
    // The update's own copy: the rollout correction's stage replaces its mask and weights.
    const inp = { ...collected };
    t.turnReward.set(inp.adv.turnReward);
    const { params, ref, m, v, adamStep, critic } = model;
    const c = startCpuUpdate({ shape, params, ref, m, v, adamStep, rolloutParams: model.rolloutParams(), critic, forward, progress, t, paramsChanged: proj.changed, adv: inp.adv });
    const capture = inp.capture ? captureWalk(updateBlocks(stages, steps, inp), (i, step) => stages[i]!.cpu(c, inp, step), c) : null;
    if (!capture) walkUpdate(stages, steps, inp, (i, step) => stages[i]!.cpu(c, inp, step));
    model.adamStep = c.adamStep;
    model.keepVersion();
    return {
      ...c.stats!,
      ...c.mismatch!,
      grad_norm: c.gradNorm,
      neg_out_grad_share: c.negOutShare,
      ...essOfUpdate(c.essMinibatch, c.essSteps, c.adamStep - adamStep),
      non_finite: c.health,
      ...(inp.snapshot ? { state: model.snapshot() } : {}),
      ...(capture ? { capture } : {}),
    };
  }

  return {
    kind: 'cpu',
    label: cpuBackendLabel(),
    writeSequences(s) {
      seq.set(s);
    },
    async sampleTurn(turn, iter) {
      const out = new Int32Array(N * shape.actionLen);
      for (let a = 0; a < shape.actionLen; a++) {
        const rowPos = shape.rolloutRowPos[turn * shape.actionLen + a]!;
        const { z } = forward(model.rolloutParams(), rowPos);
        sampleCpu(z, dims.V, rowPos, seq, shape.seed, iter, shape.sampler);
        progress();
        for (let n = 0; n < N; n++) out[n * shape.actionLen + a] = seq[rowPos[n]!]!;
      }
      return out;
    },
    writeTurn(turn, tokens) {
      const w = shape.actionLen + shape.obsLen;
      const start = shape.promptLen + turn * w;
      copyRows(seq, start, L, tokens, 0, w, w, N);
    },
    async update(inp) {
      return update(inp);
    },
    resetReference: model.resetReference,
    async readParams() {
      return Float32Array.from(model.params);
    },
    async snapshot() {
      return model.snapshot();
    },
    restore: model.restore,
    injectNaN() {
      proj.changed();
      model.params[0] = NaN;
    },
    async readBatch() {
      return copyTensors(t);
    },
    destroy() {},
  };
}

/**
 * Step-through's walk (UpdateInput.capture): the same visits as walkUpdate, block by block, with a
 * copy of the batch after the prepare phase and after every optimizer step.
 */
function captureWalk(blocks: UpdateBlock[], visit: (i: number, step: UpdateBlock['step']) => void, c: CpuUpdate): UpdateCapture {
  let prepared: UpdateCapture['prepared'] | null = null;
  const steps: UpdateCapture['steps'] = [];
  for (const block of blocks) {
    if (block.phase !== 'prepare' && !prepared) prepared = copyTensors(c.t);
    const before = block.step ? Float32Array.from(c.params) : null;
    for (const i of block.stages) visit(i, block.step);
    if (!block.step) continue;
    const [ess, lrScale] = c.essSteps ? c.essSteps[block.step.index]! : c.essMinibatch[block.step.minibatch]!;
    steps.push({ step: block.step, tensors: copyTensors(c.t), gradNorm: c.gradNorm, ess, lrScale, params: paramStep(before!, c.params) });
  }
  return { prepared: prepared ?? copyTensors(c.t), steps };
}
