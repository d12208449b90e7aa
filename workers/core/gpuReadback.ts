/**
 * What the GPU backend reads back, each through a staging buffer of its own so that reads never
 * overlap: an update's statistics (with the model state on snapshot updates, in the same copy),
 * a snapshot alone, and the batch tensors of the dump.
 */
import { unpackPpoRows, PPO_ROW_WORDS } from '../../kernels/loss/ppoLoss';
import { paramLayout } from '../../kernels/model/mlp';
import { BufferUsage } from '../../kernels/pipeline';
import { ESS_OUT_STRIDE } from '../../kernels/optimizer/essScale';
import { decodeStats, STATS_WORDS } from '../../kernels/stats/stats';
import { TRAJ_STATS_WORDS, unpackTrajStats } from '../../kernels/stats/trajStats';
import { essOfUpdate, type BatchTensors, type ModelState, type UpdateStats } from './backend';
import { essSlots, type GpuUpdate } from './update/gpuUpdate';

type BatchPart = [keyof BatchTensors | 'ppo' | 'turnIn' | 'trajStats' | 'stateKey' | 'criticBefore', GPUBuffer, number];

export function createReadbacks(g: GpuUpdate, label: string, owned: GPUBuffer[]) {
  const { device, shape, b } = g;
  const P = paramLayout(shape.dims).size;
  const CRITIC = shape.critic?.size ?? 0;
  const MB = shape.minibatches.length;
  const SLOTS = essSlots(shape);
  const read = (name: string, bytes: number) => {
    const buf = device.createBuffer({ label: `${name} (${label})`, size: Math.max(16, Math.ceil(bytes / 4) * 4), usage: BufferUsage.MAP_READ | BufferUsage.COPY_DST });
    owned.push(buf);
    return buf;
  };
  // One copy per update: statistics, the gradient norm, the health word, (ESS, lr factor) per
  // minibatch and step, ARLArena's diagnosis, then (on snapshot updates) params, ref, m, v, critic.
  const NEG_OUT_WORD = STATS_WORDS + 2 + 2 * SLOTS;
  const STATS_READ_WORDS = NEG_OUT_WORD + 1;
  const statsRead = read('stats readback', 4 * STATS_READ_WORDS);
  const snapshotRead = read('stats + snapshot readback', 4 * (STATS_READ_WORDS + 4 * P + CRITIC));
  const batch = createBatchReadback(g, read);

  /** Copies the state (params, ref, m, v, then the critic table) into `to` after its stats words. */
  const copyState = (enc: GPUCommandEncoder, to: GPUBuffer) => {
    [b.params, b.ref, b.m, b.v].forEach((buf, i) => enc.copyBufferToBuffer(buf, 0, to, 4 * (STATS_READ_WORDS + i * P), 4 * P));
    if (CRITIC) enc.copyBufferToBuffer(b.criticTable, 0, to, 4 * (STATS_READ_WORDS + 4 * P), 4 * CRITIC);
  };
  const decodeState = (bytes: ArrayBuffer, adamStep: number): ModelState => {
    const part = (i: number) => new Float32Array(bytes, 4 * (STATS_READ_WORDS + i * P), P);
    return {
      params: part(0), ref: part(1), m: part(2), v: part(3), adamStep,
      ...(CRITIC ? { critic: new Float32Array(bytes, 4 * (STATS_READ_WORDS + 4 * P), CRITIC) } : {}),
    };
  };

  return {
    sampled: read('sampled readback', 4 * shape.N * shape.actionLen),
    snapshot: snapshotRead,
    beforeUpdate: batch.beforeUpdate,
    /** The staging buffer of an update's readback (with the state after the statistics on snapshot updates). */
    updateRead: (snapshot: boolean): GPUBuffer => (snapshot ? snapshotRead : statsRead),
    /** After the pass: the statistics (and, with `snapshot`, the state) into updateRead(snapshot). */
    afterUpdate(enc: GPUCommandEncoder, snapshot: boolean): void {
      const to = snapshot ? snapshotRead : statsRead;
      enc.copyBufferToBuffer(b.statsOut, 0, to, 0, 4 * STATS_WORDS);
      enc.copyBufferToBuffer(b.norm, 0, to, 4 * STATS_WORDS, 4);
      enc.copyBufferToBuffer(b.health, 0, to, 4 * (STATS_WORDS + 1), 4);
      for (let i = 0; i < SLOTS; i++) enc.copyBufferToBuffer(b.essOut, 4 * ESS_OUT_STRIDE * i, to, 4 * (STATS_WORDS + 2 + 2 * i), 8);
      enc.copyBufferToBuffer(b.negOutOut, 0, to, 4 * NEG_OUT_WORD, 4);
      if (snapshot) copyState(enc, to);
    },
    decodeUpdate(bytes: ArrayBuffer, steps: number, adamStep: number, snapshot: boolean): UpdateStats {
      const words = new Float32Array(bytes);
      const pair = (i: number) => [words[STATS_WORDS + 2 + 2 * i]!, words[STATS_WORDS + 3 + 2 * i]!] as const;
      const start = Array.from({ length: MB }, (_, i) => pair(i));
      return {
        ...decodeStats(words),
        grad_norm: steps > 0 ? words[STATS_WORDS]! : 0,
        neg_out_grad_share: words[NEG_OUT_WORD]!,
        ...essOfUpdate(start, shape.essLr.enabled ? Array.from({ length: steps }, (_, s) => pair(MB + s)) : null, steps),
        non_finite: new Uint32Array(bytes, 4 * (STATS_WORDS + 1), 1)[0]!,
        ...(snapshot ? { state: decodeState(bytes, adamStep) } : {}),
      };
    },
    copyState,
    decodeState,
    batch,
  };
}

/**
 * The dump's tensors in one copy: the per-row buffers, the per-turn rewards (turnIn's first
 * words), the trajectory statistics, PPO's critic values and returns, IGPO's answer log-probs.
 */
function createBatchReadback(g: GpuUpdate, read: (name: string, bytes: number) => GPUBuffer) {
  const { shape, b } = g;
  const { N, L, Tp } = shape;
  const R = N * Tp;
  const T = shape.maxTurns;
  const CRITIC = shape.critic?.size ?? 0;
  // PPO: the critic table as the update found it, so the dump can show each row's value.
  const criticBefore = shape.critic ? g.f32('critic table (before the update)', CRITIC) : null;
  const batchParts: BatchPart[] = [
    ['turnIn', b.turnIn, 16 * N * T],
    ['seq', b.seq, 4 * N * L],
    ['logp', b.logp, 4 * R],
    ['logpOld', b.logpOld, 4 * R],
    ['logpRef', b.logpRef, 4 * R],
    ['entropy', b.entropy, 4 * R],
    ['sumP2', b.sumP2, 4 * R],
    ['adv', b.adv, 4 * R],
    ['ppo', b.ppo, 4 * R * PPO_ROW_WORDS],
    ['logpRollout', b.logpRollout, 4 * R],
    ['entropyOld', b.entropyOld, 4 * R],
    ['sumP2Old', b.sumP2Old, 4 * R],
    ['trajStats', b.trajStats, 4 * TRAJ_STATS_WORDS * N],
    ...(criticBefore ? ([['ret', b.returns, 4 * R], ['stateKey', b.stateKey, 4 * R], ['criticBefore', criticBefore, 4 * CRITIC]] satisfies BatchPart[]) : []),
    ...(b.score ? ([['answerLogp', b.score.logp, 4 * shape.scoreContexts * shape.scoreSpan]] satisfies BatchPart[]) : []),
  ];
  const batchRead = read('batch readback', batchParts.reduce((s, [, , n]) => s + n, 0));

  return {
    buffer: batchRead,
    /** Before the update's pass: keeps the critic table as the update finds it. */
    beforeUpdate(enc: GPUCommandEncoder) {
      if (criticBefore) enc.copyBufferToBuffer(b.criticTable, 0, criticBefore, 0, 4 * CRITIC);
    },
    copy(enc: GPUCommandEncoder) {
      let off = 0;
      for (const [, buf, n] of batchParts) {
        enc.copyBufferToBuffer(buf, 0, batchRead, off, n);
        off += n;
      }
    },
    decode(bytes: ArrayBuffer): BatchTensors {
      const parts: Record<string, ArrayBuffer> = {};
      let off = 0;
      for (const [name, , n] of batchParts) {
        parts[name] = bytes.slice(off, off + n);
        off += n;
      }
      const rows = unpackPpoRows(parts.ppo!, R);
      const turnWords = new Float32Array(parts.turnIn!);
      return {
        seq: new Int32Array(parts.seq!),
        logp: new Float32Array(parts.logp!),
        logpOld: new Float32Array(parts.logpOld!),
        logpRef: new Float32Array(parts.logpRef!),
        entropy: new Float32Array(parts.entropy!),
        sumP2: new Float32Array(parts.sumP2!),
        adv: new Float32Array(parts.adv!),
        ratio: rows.ratio,
        clip: rows.clip,
        loss: rows.loss,
        turnReward: Float32Array.from({ length: N * T }, (_, i) => turnWords[4 * i]!),
        logpRollout: new Float32Array(parts.logpRollout!),
        entropyOld: new Float32Array(parts.entropyOld!),
        sumP2Old: new Float32Array(parts.sumP2Old!),
        kl: rows.kl,
        g2: unpackTrajStats(new Float32Array(parts.trajStats!), N).g2,
        ...(parts.criticBefore ? criticValues(parts.criticBefore, parts.stateKey!, parts.ret!) : {}),
        ...(parts.answerLogp ? { answerLogp: new Float32Array(parts.answerLogp) } : {}),
      };
    },
  };
}

/** Each row's value under the table the update found, and its GAE return. */
function criticValues(table: ArrayBuffer, stateKey: ArrayBuffer, ret: ArrayBuffer): Pick<BatchTensors, 'value' | 'ret'> {
  const t = new Float32Array(table);
  return { value: Float32Array.from(new Uint32Array(stateKey), (key) => t[key]!), ret: new Float32Array(ret) };
}
