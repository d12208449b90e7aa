/** Command-line options of `npm run bench` (bench/run.ts). */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SECTIONS, type Section } from './plan';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export interface BenchArgs {
  quick: boolean;
  only: Section[];
  browser: boolean;
  /** Section 2: also run the CPU backend in Node (off with --no-node, e.g. for repeated GPU-only runs). */
  node: boolean;
  out: string;
  /** Print the tables of a saved results file instead of running anything. */
  render?: string;
  /** Section 1: only these kernels (labels), instead of all. */
  kernels?: string[];
  /** Section 1: these batch sizes (prompts) instead of the plan's. */
  kernelBatches?: number[];
  /** Section 1: rollouts per prompt of each size (8 where not given: `--kernel-batches 1024x64`). */
  kernelGroups?: number[];
  /** Section 2: the scales the GPU backend runs at (e.g. 64x on a software adapter), instead of the plan's. */
  gpuScales?: string[];
  /** Section 5: the configs (iteration scale names) the page trains with, instead of the plan's. */
  pageScales?: string[];
}

const list = (text: string) => text.split(',').map((s) => s.trim()).filter(Boolean);

/**
 * `--kernel-batches` of both benchmark commands: sizes "B" (B prompts, group 8) or "BxG" (group G),
 * e.g. "128,1024,1024x64". Each must be a configuration the trainer accepts (batch 1..1024, group
 * 1..64); 1024x64 is 589,824 rows, past a GPU's L2 cache, where the kernels are bandwidth-bound.
 */
export function parseKernelSizes(text: string): { kernelBatches: number[]; kernelGroups: number[] } {
  const sizes = list(text).map((x) => {
    const m = /^(\d+)(?:x(\d+))?$/.exec(x);
    const batch = m ? Number(m[1]) : NaN;
    const group = m?.[2] !== undefined ? Number(m[2]) : 8;
    if (!m || batch < 1 || batch > 1024 || group < 1 || group > 64) {
      throw new Error(`--kernel-batches: "${x}" is not a size B (prompts, 1..1024) or BxG (and group, 1..64)`);
    }
    return { batch, group };
  });
  if (!sizes.length) throw new Error('--kernel-batches: no sizes given');
  return { kernelBatches: sizes.map((s) => s.batch), kernelGroups: sizes.map((s) => s.group) };
}

export function parseBenchArgs(argv: string[]): BenchArgs {
  const a: BenchArgs = { quick: false, only: [...SECTIONS], browser: true, node: true, out: resolve(ROOT, 'bench/results/latest.json') };
  for (let i = 0; i < argv.length; i++) {
    const x = argv[i]!;
    const [flag, inline] = x.includes('=') ? [x.slice(0, x.indexOf('=')), x.slice(x.indexOf('=') + 1)] : [x, undefined];
    const value = () => inline ?? argv[++i] ?? '';
    if (flag === '--quick') a.quick = true;
    else if (flag === '--no-browser') a.browser = false;
    else if (flag === '--no-node') a.node = false;
    else if (flag === '--out') a.out = resolve(value());
    else if (flag === '--render') a.render = resolve(value());
    else if (flag === '--kernels') a.kernels = list(value());
    else if (flag === '--kernel-batches') Object.assign(a, parseKernelSizes(value()));
    else if (flag === '--gpu-scales') a.gpuScales = list(value());
    else if (flag === '--page-scales') a.pageScales = list(value());
    else if (flag === '--only') {
      const names = value().split(',').map((s) => s.trim()).filter(Boolean);
      for (const n of names) if (!(SECTIONS as readonly string[]).includes(n)) throw new Error(`--only: unknown section "${n}" (expected ${SECTIONS.join(', ')})`);
      a.only = names as Section[];
    } else if (flag === '--help' || flag === '-h') {
      process.stdout.write(
        'npm run bench -- [--quick] [--only kernels,iteration,peer,scaling,page] [--no-browser] [--out FILE]\n' +
          '       [--kernels headGrad,slotGrad,...] [--kernel-batches 1,4,16,128,1024x64] [--gpu-scales default,8x,64x,scale] [--no-node]\n' +
          '       [--page-scales default,64x,scale | none (only the lesson ready times)]\n' +
          '       npm run bench -- --render FILE   (print the tables of a saved results JSON)\n' +
          'env: CHROMIUM_PATH (browser binary), BENCH_CHROMIUM_ARGS (extra flags, space-separated)\n',
      );
      process.exit(0);
    } else throw new Error(`unknown option ${x} (see --help)`);
  }
  return a;
}

/**
 * Dawn's create() flags for `npm run bench:dawn`: the user's `--dawn` flags, with Dawn's
 * timestamp quantization off unless the user turns it on. Dawn rounds timestamps down to 65,536 ns
 * by default (bench/lib/timestampGrid.ts); the H200 runs of 2026-11-30 were timed so, ±1 µs per
 * dispatch at 64 dispatches a pass. Dawn keeps one value per key, so every
 * `disable-dawn-features=` list is merged into one.
 */
export function dawnCreateFlags(user: readonly string[]): string[] {
  const key = 'disable-dawn-features=';
  const listed = (f: string) => f.slice(f.indexOf('=') + 1).split(',').map((s) => s.trim()).filter(Boolean);
  const enabled = user.filter((f) => f.startsWith('enable-dawn-features=')).flatMap(listed);
  const disabled = user.filter((f) => f.startsWith(key)).flatMap(listed);
  if (!enabled.includes('timestamp_quantization') && !disabled.includes('timestamp_quantization')) disabled.push('timestamp_quantization');
  return [...user.filter((f) => !f.startsWith(key)), ...(disabled.length ? [key + [...new Set(disabled)].join(',')] : [])];
}
