/**
 * Section 3, in the page: the same update step three ways on one real batch, interleaved
 * (TF.js, our GPU backend, our CPU backend, TF.js, ...), after a correctness check of the TF.js
 * step's loss and gradient norm against our CPU reference on that batch.
 *
 * The batch: the classroom default config trained for `prepIters` iterations on the CPU backend
 * (bench/peer/capture.ts). Every contender then starts from its weights and that batch.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { Backend } from '../../workers/core/backend';
import { createCpuBackend } from '../../workers/core/cpuBackend';
import { createGpuBackend } from '../../workers/core/gpuBackend';
import { requestGpu } from '../../workers/core/gpuDevice';
import { captureUpdate } from '../peer/capture';
import { createTfPeer, type TfPeer } from '../peer/tfjsUpdate';
import { configFor } from '../lib/iteration';
import { now, summarize } from '../lib/stats';
import type { PeerResult } from '../lib/types';

export interface PeerOptions {
  scaleName: string;
  set: Record<string, string>;
  prepIters: number;
  warmup: number;
  reps: number;
  /** TF.js backends to try, in order ('webgpu', 'wasm', 'cpu'); each that initializes is measured. */
  backends: string[];
  /** Where the page can fetch the tfjs-backend-wasm binaries from. */
  wasmPath: string;
  /** Relative tolerance of the loss and gradient-norm check. */
  tolerance: number;
}

async function initTf(name: string, wasmPath: string): Promise<string | null> {
  try {
    if (name === 'webgpu') await import('@tensorflow/tfjs-backend-webgpu');
    else if (name === 'wasm') {
      const wasm = await import('@tensorflow/tfjs-backend-wasm');
      wasm.setWasmPaths(wasmPath);
      // One thread, like our CPU backend (the page is cross-origin isolated, so threads would work).
      tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
    } else await import('@tensorflow/tfjs-backend-cpu');
    const ok = await tf.setBackend(name);
    if (!ok || tf.getBackend() !== name) return `tf.setBackend('${name}') did not initialize`;
    await tf.ready();
    return null;
  } catch (e) {
    return `${name}: ${(e as Error).message}`;
  }
}

const relErr = (a: number, b: number) => Math.abs(a - b) / Math.max(1e-6, Math.abs(b));

type Captured = Awaited<ReturnType<typeof captureUpdate>>;
type Peer = { name: string; label: string; peer: TfPeer; check: { loss: number; gradNorm: number; pass: boolean }; times: number[] };

export async function runPeerBench(o: PeerOptions, log: (m: string) => void): Promise<{ results: PeerResult[]; notes: string[] }> {
  const notes: string[] = [];
  const t0 = now();
  const c = await captureUpdate(configFor(o.set), o.prepIters);
  const { shape } = c;
  log(`peer: batch captured after ${o.prepIters} CPU iterations in ${(now() - t0).toFixed(0)} ms (N=${shape.N}, R=${shape.N * shape.Tp})`);
  const ours = await ourBackends(c, notes);
  const tried: string[] = [];
  const peers = await tfPeers(o, c, tried, log);

  // Interleaved: each TF.js peer, our GPU backend, our CPU backend, then again.
  const gpuT: number[] = [];
  const cpuT: number[] = [];
  for (let i = 0; i < o.warmup + o.reps; i++) {
    const keep = i >= o.warmup;
    for (const p of peers) {
      await tf.setBackend(p.name);
      const t = now();
      await p.peer.update(c.inp);
      if (keep) p.times.push(now() - t);
    }
    if (ours.gpu) {
      const t = now();
      await ours.gpu.update(c.inp);
      if (keep) gpuT.push(now() - t);
    }
    const t = now();
    await ours.cpu.update(c.inp);
    if (keep) cpuT.push(now() - t);
    log(`peer: rep ${i + 1}/${o.warmup + o.reps}${keep ? '' : ' (warm-up)'}`);
  }
  const gpuS = ours.gpu ? summarize(gpuT) : null;
  const cpuS = summarize(cpuT);
  const results: PeerResult[] = peers.map((p) => {
    const tfS = summarize(p.times);
    log(`peer: tfjs ${p.label} ${tfS.median.toFixed(1)} ms, ours gpu ${gpuS?.median.toFixed(1) ?? '-'} ms, ours cpu ${cpuS.median.toFixed(1)} ms`);
    return {
      tfBackend: p.label,
      tfBackendNotes: [...tried],
      scale: o.scaleName,
      N: shape.N,
      R: shape.N * shape.Tp,
      warmup: o.warmup,
      reps: o.reps,
      tfjsMs: tfS,
      oursGpuMs: gpuS,
      oursCpuMs: cpuS,
      ratioVsGpu: gpuS ? tfS.median / gpuS.median : null,
      ratioVsCpu: tfS.median / cpuS.median,
      check: {
        loss: { tfjs: p.check.loss, cpu: c.loss, gpu: ours.gpuCheck?.loss ?? null },
        gradNorm: { tfjs: p.check.gradNorm, cpu: c.gradNorm, gpu: ours.gpuCheck?.gradNorm ?? null },
        tolerance: o.tolerance,
        pass: p.check.pass,
      },
    };
  });
  for (const p of peers) {
    await tf.setBackend(p.name);
    p.peer.dispose();
  }
  if (!results.length) notes.push(`no TF.js backend initialized: ${tried.join('; ')}`);
  else notes.push(...tried);
  ours.gpu?.destroy();
  ours.cpu.destroy();
  ours.device?.destroy();
  return { results, notes };
}

/** Our GPU backend (where there is an adapter; its first update is its check) and CPU backend, on the captured batch. */
async function ourBackends(c: Captured, notes: string[]) {
  let gpu: Backend | null = null;
  let gpuCheck: { loss: number; gradNorm: number } | null = null;
  let device: GPUDevice | null = null;
  try {
    const g = await requestGpu(navigator.gpu);
    device = g.device;
    gpu = createGpuBackend(g.device, c.shape, c.params, { label: g.label });
    gpu.writeSequences(c.seq);
    const s = await gpu.update(c.inp);
    gpuCheck = { loss: s.loss, gradNorm: s.grad_norm };
  } catch (e) {
    notes.push(`our GPU backend unavailable: ${(e as Error).message}`);
  }
  const cpu = createCpuBackend(c.shape, c.params);
  cpu.writeSequences(c.seq);
  await cpu.update(c.inp);
  return { gpu, gpuCheck, device, cpu };
}

/**
 * Every TF.js backend that initializes (tfjs-backend-cpu only when no other one did) gets a peer
 * on the same batch and weights, in both first-layer forms; its first update is the correctness check.
 */
async function tfPeers(o: PeerOptions, c: Captured, tried: string[], log: (m: string) => void): Promise<Peer[]> {
  const peers: Peer[] = [];
  for (const name of o.backends) {
    if (name === 'cpu' && peers.length) continue;
    const err = await initTf(name, o.wasmPath);
    if (err) {
      tried.push(`TF.js ${name} unavailable: ${err}`);
      log(`peer: tfjs ${name} unavailable: ${err}`);
      continue;
    }
    let label = name;
    if (name === 'wasm') {
      const simd = await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT');
      const threads = await tf.env().getAsync('WASM_HAS_MULTITHREAD_SUPPORT');
      label = `wasm (${simd ? 'SIMD' : 'no SIMD'}, ${threads && globalThis.crossOriginIsolated ? 'multi-threaded' : 'single thread'})`;
    }
    for (const firstLayer of ['direct', 'factored'] as const) {
      const peer = createTfPeer(c.shape, c.params, c.ref, firstLayer);
      const what =
        firstLayer === 'direct'
          ? `first layer direct, embedding by ${peer.embeddingLookup}`
          : `first layer factored, table rows by ${peer.embeddingLookup === 'gather' ? 'gather' : 'count matrix matmul'}`;
      const full = `${label}; ${what}`;
      peer.setBatch(c.seq);
      const tc = await peer.update(c.inp);
      const pass =
        Number.isFinite(tc.loss) && Number.isFinite(tc.gradNorm) &&
        relErr(tc.loss, c.loss) <= o.tolerance && relErr(tc.gradNorm, c.gradNorm) <= o.tolerance;
      log(`peer: tfjs ${full} check: loss ${tc.loss} vs CPU ${c.loss}, grad norm ${tc.gradNorm} vs CPU ${c.gradNorm} -> ${pass ? 'PASS' : 'FAIL'}`);
      peers.push({ name, label: full, peer, check: { ...tc, pass }, times: [] });
    }
  }
  return peers;
}
