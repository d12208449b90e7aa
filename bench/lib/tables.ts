/** Markdown tables of the benchmark results (printed by bench/run.ts, pasted into BENCHMARKS.md). */
import { KERNEL_COST_FORMULAS, type LaunchShape } from './kernelCases';
import { looksQuantized, type TimestampGrid } from './timestampGrid';
import type { Summary } from './stats';
import type { EncodingCost, IterationRow, KernelRow, LessonReadyResult, PageEnv, PageRunResult, PeerResult, ScalingAxis } from './types';

export interface BenchResults {
  meta: {
    date: string;
    command: string;
    node: string;
    cpuModel: string;
    cpuCount: number;
    chromiumFlags: string[];
    browserVersion: string | null;
    sections: string[];
    quick: boolean;
    wallSeconds?: number;
    /** os.loadavg() (1, 5, 15 min) at the start and the end: other load on a shared machine. */
    loadStart: number[];
    loadEnd?: number[];
  };
  env?: PageEnv;
  kernels?: { rows: KernelRow[]; unknownBindings: string[]; timestampGrid?: TimestampGrid; encoding?: EncodingCost };
  /** Launch shapes of every kernel at the iteration scales (computed, not measured). */
  launch?: Array<{ scale: string; R: number; shapes: LaunchShape[] }>;
  iteration?: IterationRow[];
  peer?: { results: PeerResult[]; notes: string[] };
  scaling?: { axes: ScalingAxis[]; notes: string[] };
  page?: { runs: PageRunResult[]; notes: string[]; lessonReady?: LessonReadyResult[] };
  errors: Record<string, string>;
}

export function fmt(x: number | null | undefined, digits?: number): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return 'n/a';
  if (digits !== undefined) return x.toFixed(digits);
  const a = Math.abs(x);
  if (a === 0) return '0';
  if (a < 0.01) return x.toPrecision(2);
  if (a < 1) return x.toFixed(3);
  if (a < 10) return x.toFixed(2);
  if (a < 100) return x.toFixed(1);
  return x.toFixed(0);
}

const ms = (s: Summary | null | undefined) => (s && s.n ? `${fmt(s.median)} / ${fmt(s.min)}` : 'n/a');

export function table(head: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

function bytesText(b: number): string {
  if (!Number.isFinite(b)) return 'n/a';
  if (b >= 1 << 20) return `${fmt(b / (1 << 20))} MiB`;
  if (b >= 1 << 10) return `${fmt(b / (1 << 10))} KiB`;
  return `${fmt(b)} B`;
}

export function envSection(r: BenchResults): string {
  const a = r.env?.adapter;
  const lines = [
    `- Date: ${r.meta.date}`,
    `- Command: \`${r.meta.command}\`${r.meta.quick ? ' (quick sizes)' : ''}; sections: ${r.meta.sections.join(', ')}`,
    `- Machine: ${r.meta.cpuCount} × ${r.meta.cpuModel}; Node ${r.meta.node}`,
    `- Browser: ${r.meta.browserVersion ?? 'not started'}${r.env ? ` (navigator.hardwareConcurrency ${r.env.hardwareConcurrency})` : ''}; flags \`${r.meta.chromiumFlags.join(' ')}\``,
  ];
  if (a) {
    lines.push(
      a.available
        ? `- WebGPU adapter: ${[a.vendor, a.architecture, a.device, a.description].filter(Boolean).join(' | ') || '(no info)'}; ` +
            `isFallbackAdapter **${a.isFallbackAdapter}**; timestamp-query ${a.timestampQuery ? 'yes' : 'no'}`
        : `- WebGPU adapter: none (${a.error})`,
    );
  }
  if (r.meta.wallSeconds !== undefined) lines.push(`- Whole run: ${fmt(r.meta.wallSeconds)} s`);
  const la = (x?: number[]) => (x ? x.map((v) => v.toFixed(2)).join(' / ') : 'n/a');
  lines.push(`- Load average (1 / 5 / 15 min) at start: ${la(r.meta.loadStart)}; at end: ${la(r.meta.loadEnd)} (other processes on the machine)`);
  return lines.join('\n');
}

/**
 * "k × floor": the dispatches of one call times one dependent dispatch's fixed cost at that size,
 * as a share of the kernel's time (how much of it the dispatch count alone explains); '' for
 * results from before both were recorded.
 */
export function floorShare(r: KernelRow, timestamps: boolean): string {
  const t = timestamps ? (r.gpuTimestampMs ?? r.gpuWallMs) : r.gpuWallMs;
  if (r.dispatchesPerCall === undefined || !r.floorMs?.n || !(t.median > 0)) return '';
  // The fastest pass: a floor's passes only ever get slower (on SwiftShader, 2 of 3 passes right
  // after a size's inputs were built once took 20x the others).
  return `${r.dispatchesPerCall} × ${fmt(r.floorMs.min * 1e3)} µs = ${fmt((100 * r.dispatchesPerCall * r.floorMs.min) / t.median, 0)}%`;
}

/**
 * "marginal of copy": from the kernel's next smaller size to this one, the copy's extra time for
 * its extra bytes over the kernel's extra time for them, so fixed costs (launch, a dependent
 * dispatch's floor, a reduction's tree) cancel out: near the "of copy" column, the kernel costs
 * its bytes at that rate; well above it, fixed costs are what keeps it under. '—' where the
 * kernel's time did not grow (bound by its fixed costs at these sizes) or the copy's did not;
 * '' at the smallest size and where the previous size is missing or skipped.
 */
export function marginalOfCopy(r: KernelRow, prev: KernelRow | undefined, timestamps: boolean): string {
  if (!prev || prev.skipped || r.skipped || !(r.bytes > prev.bytes)) return '';
  const time = (x: KernelRow) => (timestamps ? (x.gpuTimestampMs ?? x.gpuWallMs) : x.gpuWallMs).median;
  const copy = (x: KernelRow) => (timestamps ? (x.copyTimestampMs ?? x.copyWallMs) : x.copyWallMs).median;
  const dt = time(r) - time(prev);
  const dc = copy(r) - copy(prev);
  if (!(dt > 0 && dc > 0)) return '—';
  return `${fmt((100 * dc) / dt, 0)}%`;
}

export function kernelTable(k: NonNullable<BenchResults['kernels']>, timestamps: boolean): string {
  const rows = [...k.rows].sort((a, b) => a.kernel.localeCompare(b.kernel) || a.sizeIndex - b.sizeIndex);
  const body = rows.map((r, i) =>
    r.skipped
      ? [r.kernel, r.size, r.skipped, '', '', '', '', '', '', '', '', '', '', '']
      : [
          r.kernel,
          r.size,
          bytesText(r.bytes),
          ms(timestamps ? r.gpuTimestampMs : r.gpuWallMs),
          ms(r.gpuWallMs),
          String(r.dispatchesPerPass),
          fmt(r.gbps),
          fmt(r.gflops),
          fmt(r.copyGbps),
          `${fmt((100 * r.gbps) / r.copyGbps, 0)}%`,
          marginalOfCopy(r, rows[i - 1]?.kernel === r.kernel ? rows[i - 1] : undefined, timestamps),
          floorShare(r, timestamps),
          ms(r.cpuMs),
          fmt(r.gpuOverCpu),
        ],
  );
  const head = [
    'kernel', 'size', 'bytes', `GPU ms ${timestamps ? '(timestamps)' : '(wall)'} median / min`, 'wall ms median / min', 'calls per pass',
    'GB/s', 'GFLOP/s', 'copy GB/s (same bytes)', 'of copy', 'marginal of copy (from the size before)', 'dispatches per call × floor, of the time', 'CPU ref ms median / min', 'GPU / CPU time',
  ];
  const reps = rows.find((r) => !r.skipped)?.reps;
  const notes = [
    `Times are per call of a kernel (one call may record several dispatches, each waiting on the one before: the floor column says how many). GB/s = compulsory bytes / median time (timestamps when the adapter has them); the copy column is a plain vec4 copy of the same bytes on the same device; "GPU / CPU time" below 1 means the WGSL kernel is faster than its TypeScript reference in the same page.`,
    'Memory-bound kernels (judge them by GB/s against the copy): sample, tokenStats, advantage, ppoLoss, logitGrad, gradNorm, adam, stats, finiteCheck. ' +
      'Matmul-like kernels (judge them by GFLOP/s; their compulsory bytes are small): embedProject, forward, headGrad, hiddenGrad, slotGrad, firstLayerGrad.',
    'Marginal of copy: between this size and the one before, the copy\'s extra time over the kernel\'s extra time, so that fixed costs cancel: near "of copy", the kernel costs its bytes at that rate; well above it, fixed costs keep it under at that size. "—": the kernel\'s time did not grow. Small differences of times make it noisy; read it at the larger sizes.',
    'The floor is one dependent dispatch of a 4 KiB copy, its fastest pass (bench/page/kernels.ts): what each dispatch of a call costs before its bytes count. A share near 100% means the kernel is bound by its dispatches at that size, not by its bytes.',
    k.encoding ? encodingNote(k.encoding) : '',
    k.timestampGrid && looksQuantized(k.timestampGrid)
      ? `**Timestamps were quantized**: all ${k.timestampGrid.passes} passes had both timestamps on a 65,536 ns grid (Dawn's timestamp_quantization), so each per-dispatch time carries up to 65.5 µs / (calls per pass) of error. Chromium: --enable-webgpu-developer-features; Dawn in Node: disable-dawn-features=timestamp_quantization.`
      : '',
    reps ? `Repetitions per cell: ${reps.gpu} GPU passes, ${reps.cpu} CPU runs, ${reps.copy} copy passes after warm-up (fewer only where one run would exceed the cell budget; see latest.json).` : '',
    k.unknownBindings.length ? `Bindings without a declared input (scratch buffers, bytes formula may be stale): ${k.unknownBindings.join(', ')}.` : '',
    '',
    'Bytes and FLOPs per kernel (R rows, V vocabulary, K context, D embedding, H hidden, P parameters, N trajectories):',
    '',
    ...Object.entries(KERNEL_COST_FORMULAS).map(([name, f]) => `- \`${name}\`: ${f}`),
  ].filter((s, i, a) => s !== '' || a[i - 1] !== '');
  return `${table(head, body)}\n\n${notes.join('\n')}`;
}

/** The CPU cost of recording work (bench/page/kernels.ts timeEncoding), in one sentence. */
export function encodingNote(e: EncodingCost): string {
  return (
    `Recording costs the CPU too: one dispatch (setPipeline, setBindGroup, dispatchWorkgroups, as every kernel's encode records it) took ` +
    `${fmt(e.dispatchUs.median)} µs of the recording thread (median of ${e.dispatchUs.n} passes of ${e.dispatches}; min ${fmt(e.dispatchUs.min)}), ` +
    `and finishing and submitting the pass ${fmt(e.submitUs.median)} µs` +
    (e.readbackUs
      ? `; a 4 KiB readback's round trip (one dispatch and a copy submitted, then mapAsync until the bytes are here, as each rollout turn makes one) took ${fmt(e.readbackUs.median)} µs (min ${fmt(e.readbackUs.min)})`
      : '') +
    `. An iteration's dispatches (iteration table) cost that many times the first, on top of their GPU time.`
  );
}

export function launchTable(l: NonNullable<BenchResults['launch']>): string {
  const kernels = l[0]?.shapes.map((x) => x.kernel) ?? [];
  const body = kernels.map((k, i) => [
    k,
    ...l.map((sc) => {
      const x = sc.shapes[i]!;
      return `${x.threads.toLocaleString('en-US')} × ${x.serial.toLocaleString('en-US')}`;
    }),
    l[0]!.shapes[i]!.mapping,
  ]);
  return table(['kernel', ...l.map((sc) => `${sc.scale} (R=${sc.R}): invocations × serial steps`), 'mapping'], body);
}

export function iterationTable(rows: IterationRow[]): string {
  const body = rows.map((r) => {
    const c = r.counts;
    const chk = (got: number, exp: number) => `${fmt(got)} (${fmt(exp)}${Math.abs(got - exp) < 1e-9 ? ' ✓' : ' ✗'})`;
    return [
      r.scale,
      `${r.backend} (${r.where})`,
      fmt(r.N, 0),
      fmt(r.R, 0),
      `${r.reps} (+${r.warmup})`,
      ms(r.iterMs),
      ms(r.rolloutMs),
      r.sampleTurnMs ? `${ms(r.sampleTurnMs)} / ${fmt(r.rolloutMs.median - r.sampleTurnMs.median)}` : '',
      ms(r.updateMs),
      fmt(r.tokensPerSec, 0),
      fmt(r.turns),
      c ? chk(c.perIter.dispatches, c.expected.dispatches) : 'n/a',
      c ? chk(c.perIter.readbacks, c.expected.readbacks) : 'n/a',
      c ? chk(c.perIter.submits, c.expected.submits) : 'n/a',
      c ? `${bytesText(c.perIter.uploadBytes)} / ${bytesText(c.perIter.readbackBytes)}` : 'n/a',
      c ? String(c.buffersCreatedWhileTimed) : 'n/a',
      [r.note, r.error].filter(Boolean).join('; '),
    ];
  });
  const t = table(
    [
      'scale', 'backend', 'rollouts N', 'rows N·Tp', 'reps (+warm-up)', 'iteration ms median / min', 'rollout ms',
      'of the rollout: in sampleTurn ms median / min / the rest (medians)', 'update ms', 'tokens/s',
      'turns', 'dispatches/iter (expected)', 'readbacks/iter (expected)', 'submits/iter (expected)', 'uploaded / read back per iter',
      'buffers created while timed', 'note',
    ],
    body,
  );
  const notes = [
    'Scales: the classroom default (16 prompts × 8 rollouts), 8× and 64× the rollouts (batch 128 and 1024). Whole `trainer.step()` calls; ' +
      'rollout = step start to the update call (per turn: one submit of forward + sample per action slot and one readback of the sampled tokens, ' +
      'then the task answers in TypeScript), update = `backend.update()` (one submit with every kernel, one readback of the statistics). ' +
      'Of the rollout, the time spent inside `sampleTurn` (on the GPU: the submit, the GPU\'s work and the tokens\' readback; on the CPU: the model) and the rest, the host\'s work between turns (the tasks, the collector, the uploads).',
    'tokens/s = policy tokens of the iteration (the `tokens` metric: sampled tokens that enter the loss) / median iteration time.',
    'GPU counts are means per timed iteration, counted by wrapping the GPUDevice the backend was built on (submit, dispatchWorkgroups via wrapped encoders and passes, ' +
      'mapAsync); "expected" is workers/core/gpuBackend.ts `dispatchCounts(shape)` for the turns actually run, 1 readback and 1 submit per turn and per update. ' +
      'Bytes read back include the trainer\'s state snapshot (parameters, reference, Adam m and v) that rides along with every 10th update\'s readback.',
    'GPU and CPU rows of the same scale in Chromium ran interleaved (one step each in turn); the Node rows ran after them.',
  ];
  return `${t}\n\n${notes.map((n) => `- ${n}`).join('\n')}`;
}

export function peerTable(p: NonNullable<BenchResults['peer']>): string {
  const body = p.results.map((r) => [
    r.tfBackend,
    `${r.scale} (N=${r.N}, R=${r.R})`,
    `${r.reps} (+${r.warmup})`,
    ms(r.tfjsMs),
    ms(r.oursGpuMs),
    ms(r.oursCpuMs),
    fmt(r.ratioVsGpu),
    fmt(r.ratioVsCpu),
    `${fmt(r.check.loss.tfjs, 6)} / ${fmt(r.check.loss.cpu, 6)} / ${fmt(r.check.loss.gpu, 6)}`,
    `${fmt(r.check.gradNorm.tfjs, 6)} / ${fmt(r.check.gradNorm.cpu, 6)} / ${fmt(r.check.gradNorm.gpu, 6)}`,
    `${r.check.pass ? 'PASS' : 'FAIL'} (rel. tol ${r.check.tolerance})`,
  ]);
  const t = table(
    [
      'TF.js backend', 'batch', 'reps (+warm-up)', 'TF.js update ms median / min', 'our GPU update ms', 'our CPU update ms', 'TF.js / our GPU',
      'TF.js / our CPU', 'loss TF.js / CPU ref / our GPU', 'grad norm TF.js / CPU ref / our GPU', 'check',
    ],
    body,
  );
  const notes = [
    'One update step (the classroom default: 1 epoch × 1 minibatch) on one real batch: old and reference log-probs, GRPO advantages, clipped surrogate (token-mean weights), ' +
      'backward, global-norm clipping, Adam; each side uploads the rewards, mask and weights and reads back once. Ours also computes the chart statistics and the NaN checks (3 more dispatches; 6 in results from before the NaN checks became one dispatch on 2026-12-01) that the TF.js step leaves out.',
    'The three ran interleaved (TF.js backends, our GPU, our CPU, again); ratio = TF.js median / ours median (above 1: ours is faster).',
    'Check: the TF.js loss and pre-clip gradient norm of the first step against our CPU reference (TypeScript, float64 accumulation) on the same batch and weights.',
    ...p.notes,
  ];
  return `${t}\n\n${notes.map((n) => `- ${n}`).join('\n')}`;
}

export function scalingTables(s: NonNullable<BenchResults['scaling']>): string {
  const summary = table(
    ['axis', 'backend', 'points (x: min iteration ms)', 'slope: iteration (min / median)', 'slope: update', 'slope: rollout', 'segment slopes (iteration)', 'FLOPs slope: iteration / update', 'growth'],
    s.axes.map((a) => [
      a.axis,
      `${a.backend} (${a.where})`,
      a.points.map((p) => `${p.x}: ${fmt(p.iterMs.min)}`).join(', '),
      `${fmt(a.slopeIter, 2)} / ${fmt(a.slopeIterMedian, 2)}`,
      fmt(a.slopeUpdate, 2),
      fmt(a.slopeRollout, 2),
      a.segmentSlopes.map((x) => fmt(x, 2)).join(', '),
      `${fmt(a.workSlopeIter, 2)} / ${fmt(a.workSlopeUpdate, 2)}`,
      a.growth,
    ]),
  );
  const detail = table(
    ['axis', 'backend', 'point', 'rows N·Tp', 'iteration ms median / min', 'rollout ms', 'update ms'],
    s.axes.flatMap((a) => a.points.map((p) => [a.axis, a.backend, p.label, String(p.R), ms(p.iterMs), ms(p.rolloutMs), ms(p.updateMs)])),
  );
  const notes = [
    'One axis doubles at a time from a small base (sizes in the rows); every point and both backends ran interleaved in one loop. ' +
      'Slopes are least-squares fits of log(time) on log(x) over the minimum times (other load on a shared machine only adds time); ' +
      'the median-based slope is next to it. Slope 1 = linear; well below 1 = fixed per-iteration cost (dispatch, submit, sync, JS) dominates. ' +
      'The FLOPs slope is what the time would do if it followed the arithmetic (bench/lib/kernelCases.ts iterationFlops; rollout counted at the turn limit).',
    'seqLen doubles the turn limit: training rows per trajectory (Tp = 3 × turns) double, the sequence length L = 4 + 5 × turns nearly doubles, and rollout turns (one submit and readback each) double when episodes run to the limit.',
    ...s.notes,
  ];
  return `${summary}\n\n${detail}\n\n${notes.map((n) => `- ${n}`).join('\n')}`;
}

/** Lesson step ready times: one row per lesson, then the median; the browser's CPU by thread where measured. */
export function lessonReadyTable(rows: LessonReadyResult[]): string {
  const ok = rows.map((r) => r.ms).filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  const median = ok.length ? (ok.length % 2 ? ok[(ok.length - 1) / 2]! : (ok[ok.length / 2 - 1]! + ok[ok.length / 2]!) / 2) : NaN;
  const cpu = rows.some((r) => r.cpu);
  const cpuCells = (r: LessonReadyResult) => {
    if (!cpu) return [];
    if (!r.cpu) return ['', '', '', '', ''];
    const c = r.cpu;
    const share = (x: number) => `${fmt(x, 2)} (${fmt((100 * x) / c.total, 0)} %)`;
    return [fmt(c.total, 2), share(c.pageMain), share(c.workers), share(c.rendererPool), share(c.other)];
  };
  const cpuHead = cpu ? ['browser CPU (s)', 'page main thread', 'workers', 'renderer thread pool', 'other'] : [];
  return [
    table(
      ['lesson', 'step 1 ready (ms)', 'lines held', ...cpuHead, 'error'],
      rows.map((r) => [r.lesson, fmt(r.ms, 0), `${r.held}/${r.lines}`, ...cpuCells(r), r.error ?? '']),
    ),
    '',
    `Lesson step ready: the step's link opened in a fresh page on the CPU backend, from navigation to every "what you should see" line measured on the mean over the lesson's seeds (none still "…": the seed on screen and the others trained beside it, one worker per core); median over the lessons ${fmt(median, 0)} ms.`,
    ...(cpu
      ? [
          '',
          "Browser CPU: the CPU seconds all of the browser's threads used in that window (/proc, user + system), by thread: the page's main thread (script, style, layout, paint), the trainer workers, the renderer's thread pool (V8's background compiles and GC of the page and of every worker, script parsing, raster) and every other thread (the browser and GPU processes, compositor, I/O). On n cores a window of t seconds holds at most n × t.",
        ]
      : []),
  ].join('\n');
}

export function pageTable(p: NonNullable<BenchResults['page']>): string {
  const body = p.runs.map((r) => [
    r.scale ?? 'default',
    r.backend,
    r.statusText,
    fmt(r.seconds),
    String(r.iterations),
    fmt(r.iterations / r.seconds),
    String(r.longTasks.count),
    fmt(r.longTasks.totalMs),
    fmt(r.longTasks.maxMs),
    fmt(r.chartUpdatesPerSec),
    fmt(r.framesPerSec),
    r.batchLoad ? `${r.batchLoad.trajectories}: ${fmt(r.batchLoad.ms, 0)} ms, ${r.batchLoad.longTasks} long (max ${fmt(r.batchLoad.maxMs, 0)})` : 'n/a',
    r.mainThread
      ? `${fmt(r.mainThread.taskMs, 0)} (script ${fmt(r.mainThread.scriptMs, 0)}, layout ${fmt(r.mainThread.layoutMs, 0)}, style ${fmt(r.mainThread.styleMs, 0)}) / ${fmt(r.mainThread.cpuMs, 0)}`
      : 'n/a',
    r.error ?? '',
  ]);
  const t = table(
    [
      'config', 'backend', 'status line', 'seconds', 'iterations', 'iterations/s', 'long tasks (>50 ms)', 'long-task ms total', 'longest ms', 'chart updates/s', 'frames/s (rAF)',
      'batch after Pause: trajectories: ms to the matrix, long tasks', 'main thread: ms in tasks (script, layout, style) / CPU ms', 'error',
    ],
    body,
  );
  const notes = [
    'The built app (vite build + vite preview), opened with each config as a share link (the iteration scales of section 2); the backend picked in the UI, Start, a fixed time of training, Pause. ' +
      'Long tasks: PerformanceObserver("longtask") on the main thread (the trainer runs in a worker); chart updates: changes of the reward chart\'s data-points attribute; frames: requestAnimationFrame callbacks; ' +
      'main thread: DevTools Performance.getMetrics deltas (TaskDuration, ScriptDuration, LayoutDuration, RecalcStyleDuration are wall time; ThreadTime is the main thread\'s CPU time, so a CPU time well below the task time means the thread was waiting for a core).',
    'Batch after Pause: the paused run\'s last batch into the inspector (by itself up to 4,096 trajectories, else by clicking "Load the batch"), from then to the reward matrix drawn; the long tasks are those of that window.',
    ...p.notes,
  ];
  return `${t}\n\n${notes.map((n) => `- ${n}`).join('\n')}`;
}

export function renderMarkdown(r: BenchResults): string {
  const out: string[] = ['## Environment', '', envSection(r)];
  const ts = Boolean(r.env?.adapter.timestampQuery);
  if (r.kernels) out.push('', '## 1. Kernels', '', kernelTable(r.kernels, ts));
  if (r.launch) {
    out.push('', '### Launch shapes (computed from the WGSL, hardware-independent)', '', launchTable(r.launch), '',
      'A GPU needs about 10^4 to 10^5 invocations in flight to be busy; a kernel with few invocations and a long serial loop is latency-bound on any GPU.');
  }
  if (r.iteration) out.push('', '## 2. One training iteration', '', iterationTable(r.iteration));
  if (r.peer) out.push('', '## 3. Peer: the same update step in TensorFlow.js', '', peerTable(r.peer));
  if (r.scaling) out.push('', '## 4. Scaling (one axis at a time, doubling)', '', scalingTables(r.scaling));
  if (r.page) out.push('', '## 5. The page during a training run', '', pageTable(r.page));
  if (r.page?.lessonReady) out.push('', lessonReadyTable(r.page.lessonReady));
  const errs = Object.entries(r.errors);
  if (errs.length) out.push('', '## Errors', '', ...errs.map(([k, v]) => `- ${k}: ${v}`));
  return out.join('\n') + '\n';
}
