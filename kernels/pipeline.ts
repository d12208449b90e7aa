/**
 * Host-side plumbing shared by the kernel modules: WGSL source assembly (common.wgsl and the
 * kernel's uniform structs joined in front of each kernel), a per-device pipeline cache, uniform
 * structs declared once as a field table (the WGSL struct is written from it), and 2-D dispatch
 * grids (more than 65535 workgroups).
 *
 * A kernel is `defineKernel({...})`; `spec.create(device)` gives `{ bind, encode, destroy }`. Each
 * `bind(buffers, config)` makes one dispatch configuration with its own uniform buffer and bind
 * group, created once: uniforms written with writeBuffer between dispatches of one submit would all
 * read the last value, so every distinct configuration in a submit needs its own call.
 */
import commonWGSL from './common.wgsl?raw';

export { commonWGSL };

/**
 * GPUBufferUsage and GPUMapMode bits (fixed by the WebGPU spec). Used instead of the globals, which
 * Node's `webgpu` package (Dawn) only installs when asked to, so the engine runs there unchanged.
 */
export const BufferUsage = {
  MAP_READ: 0x1,
  COPY_SRC: 0x4,
  COPY_DST: 0x8,
  UNIFORM: 0x40,
  STORAGE: 0x80,
} as const;
export const MapMode = { READ: 0x1 } as const;

export type ScalarType = 'u32' | 'i32' | 'f32';

/**
 * A WGSL uniform struct of 4-byte scalars, in declaration order: the one description of it. The
 * WGSL declaration (`wgsl`) is written from it and joined in front of the kernels that bind it, so
 * the WGSL files declare no uniform struct of their own.
 */
export interface UniformLayout<N extends string> {
  /** The WGSL struct's name (the type of the kernel's `var<uniform>`). */
  readonly struct: string;
  readonly fields: ReadonlyArray<readonly [N, ScalarType]>;
  /** `struct <name> { field: type, ... }`, as WGSL declares it. */
  readonly wgsl: string;
  /** Byte offset of each field. */
  readonly offsets: Readonly<Record<N, number>>;
  /** Buffer size in bytes (rounded up to 16). */
  readonly size: number;
  pack(values: Readonly<Record<N, number>>): ArrayBuffer;
}

export function uniformLayout<const N extends string>(struct: string, fields: ReadonlyArray<readonly [N, ScalarType]>): UniformLayout<N> {
  const offsets = {} as Record<N, number>;
  fields.forEach(([name], i) => (offsets[name] = 4 * i));
  const size = Math.max(16, Math.ceil((4 * fields.length) / 16) * 16);
  return {
    struct,
    fields,
    wgsl: `struct ${struct} {\n${fields.map(([name, type]) => `  ${name}: ${type},\n`).join('')}}\n`,
    offsets,
    size,
    pack(values) {
      const buf = new ArrayBuffer(size);
      const view = new DataView(buf);
      for (const [name, type] of fields) {
        const x = values[name];
        if (typeof x !== 'number' || Number.isNaN(x)) throw new Error(`uniform field ${name}: got ${x}`);
        if (type === 'f32') view.setFloat32(offsets[name], x, true);
        else if (type === 'i32') view.setInt32(offsets[name], x, true);
        else {
          if (!Number.isInteger(x) || x < 0 || x > 0xffffffff) throw new Error(`uniform field ${name}: ${x} is not a u32`);
          view.setUint32(offsets[name], x, true);
        }
      }
      return buf;
    },
  };
}

/** Whole buffer or a range of one. */
export type BufferArg = GPUBuffer | GPUBufferBinding;

/** Byte size a buffer argument offers from its offset on. */
export function bindingBytes(b: BufferArg): number {
  if ('buffer' in b) return b.size ?? b.buffer.size - (b.offset ?? 0);
  return b.size;
}

export interface KernelCall<C> {
  readonly label: string;
  /** The kernel's pipeline, or for a specialized kernel the one compiled for this call's constants. */
  readonly pipeline: GPUComputePipeline;
  readonly bindGroup: GPUBindGroup;
  readonly uniform: GPUBuffer;
  /** [x, y] workgroups of the dispatch; [0, 0] dispatches nothing. */
  readonly workgroups: readonly [number, number];
  /** Rewrites this call's uniform with queue.writeBuffer; the next submit sees it. */
  update(c: C): void;
}

export interface Kernel<B, C> {
  readonly label: string;
  /** One dispatch configuration: a uniform buffer and a bind group, made once and reused. */
  bind(buffers: B, config: C, label?: string): KernelCall<C>;
  /** setPipeline + setBindGroup + dispatchWorkgroups (nothing when the call has no work). */
  encode(pass: GPUComputePassEncoder, call: KernelCall<C>): void;
  /** Destroys the uniform buffers this instance made (the cached pipeline stays with the device). */
  destroy(): void;
}

export interface KernelSpec<C, BN extends string, N extends string> {
  /** Pipeline, shader module and buffer labels; also the WGSL file's name unless `file` says another. */
  label: string;
  /** The kernel's own WGSL; common.wgsl is joined in front. */
  wgsl: string;
  /**
   * The WGSL file `wgsl` starts with, where it is not `label`: a file that holds the passes of one
   * operation as entry points of their own, over shared declarations.
   */
  file?: string;
  /** The entry point (default `main`). */
  entryPoint?: string;
  /** Passed as the WGSL override `workgroupSize` (a power of two). */
  workgroupSize: number;
  /**
   * Buffer bindings in WGSL order: `@binding(1)`, `@binding(2)`, ...; or each name with its binding
   * number, for an entry point that uses some of a file's shared declarations. Binding 0 is the uniform.
   */
  bindings: ReadonlyArray<BN> | Readonly<Record<BN, number>>;
  uniform: UniformLayout<N>;
  /**
   * Every uniform struct the kernel's WGSL file reads, where it is more than the kernel's own: a
   * file of several entry points declares each one's (their structs are joined in front of it).
   */
  fileUniforms?: ReadonlyArray<UniformLayout<string>>;
  values(c: C): Readonly<Record<N, number>>;
  /** Workgroups the dispatch needs in all. */
  workgroups(c: C): number;
  /** Throws for a configuration the WGSL cannot handle (fixed-size workgroup arrays). */
  check?(c: C): void;
  /**
   * WGSL overrides besides workgroupSize that the pipeline is compiled with, taken from the
   * configuration (the vocabulary, so that loops over a row unroll and the row stays in
   * registers): each call gets the pipeline for its values, compiled once per device and set of
   * values. The WGSL's defaults are only for compilation checks.
   */
  specialize?(c: C): Readonly<Record<string, number>>;
  /**
   * An optional device feature the WGSL needs ('subgroups'): its `enable` directive goes in front
   * of common.wgsl, and only a device created with the feature can compile it (compileKernels
   * skips the kernel elsewhere; the backend then picks a variant without it).
   */
  requires?: KernelFeature;
}

export type KernelFeature = 'subgroups';

/**
 * Directives in front of a kernel that requires a feature. The subgroup kernels give every row to
 * one subgroup and branch on subgroup-uniform values; WGSL's uniformity analysis works at
 * workgroup scope and would reject subgroup operations there, so that diagnostic is turned off.
 */
const FEATURE_DIRECTIVES: Record<KernelFeature, string> = {
  subgroups: 'enable subgroups;\ndiagnostic(off, subgroup_uniformity);\n',
};

/** One pipeline to compile: a kernel's source and the override constants of one configuration. */
export interface KernelPipeline {
  readonly label: string;
  readonly source: string;
  /** The entry point, where it is not `main`. */
  readonly entryPoint?: string;
  /** The WGSL file the kernel's own source starts with, where it is not `${label}.wgsl`. */
  readonly file?: string;
  readonly workgroupSize: number;
  readonly requires?: KernelFeature;
  readonly constants?: Readonly<Record<string, number>>;
}

export interface DefinedKernel<B, C> {
  readonly label: string;
  /** common.wgsl joined with the kernel's own WGSL. */
  readonly source: string;
  readonly entryPoint?: string;
  readonly file?: string;
  readonly workgroupSize: number;
  /** The device feature the kernel needs, if any. */
  readonly requires?: KernelFeature;
  /** The TS mirror of the kernel's uniform struct (binding 0). */
  readonly uniform: UniformLayout<string>;
  /**
   * The pipelines a bind() with `config` compiles (one), so that they can be compiled all at once
   * beforehand (compileKernels). A specialized kernel needs the configuration: without one it
   * throws rather than name a pipeline no call would use.
   */
  pipelines(config?: C): KernelPipeline[];
  create(device: GPUDevice): Kernel<B, C>;
}

interface CachedPipeline {
  module: GPUShaderModule;
  pipeline: GPUComputePipeline;
  /**
   * The module's compilation messages, asked for once: in Chromium 156 a second
   * getCompilationInfo() on the same module never resolves.
   */
  compilation?: Promise<GPUCompilationInfo>;
  /** Whether a bind() has taken it from the cache (compileKernels' pipelines start unused). */
  used: boolean;
  /** How it was compiled: by getPipeline on first use, or ahead by compileKernels. */
  compiled: 'sync' | 'async';
}

const pipelineCache = new WeakMap<GPUDevice, Map<string, CachedPipeline>>();

/** What this device has compiled, and which of its pipelines no bind() has taken yet. */
export interface PipelineCounts {
  /** Compiled on first use, one blocking createComputePipeline each. */
  sync: number;
  /** Compiled ahead, side by side (compileKernels). */
  async: number;
  /** Cache keys (label#workgroupSize#constants) compiled but never bound. */
  unused: string[];
}

export function pipelineCounts(device: GPUDevice): PipelineCounts {
  const entries = [...devicePipelines(device)];
  return {
    sync: entries.filter(([, e]) => e.compiled === 'sync').length,
    async: entries.filter(([, e]) => e.compiled === 'async').length,
    unused: entries.filter(([, e]) => !e.used).map(([key]) => key),
  };
}

/** The kernel's pipeline on this device, compiled on first use and cached by label. */
export function getPipeline(
  device: GPUDevice,
  k: { label: string; source: string; workgroupSize: number; entryPoint?: string; constants?: Readonly<Record<string, number>> },
): CachedPipeline {
  const perDevice = devicePipelines(device);
  const key = pipelineKey(k);
  let hit = perDevice.get(key);
  if (!hit) {
    const module = device.createShaderModule({ label: k.label, code: k.source });
    const pipeline = device.createComputePipeline(pipelineDescriptor(k, module));
    hit = { module, pipeline, used: false, compiled: 'sync' };
    perDevice.set(key, hit);
  }
  hit.used = true;
  return hit;
}

function devicePipelines(device: GPUDevice): Map<string, CachedPipeline> {
  let perDevice = pipelineCache.get(device);
  if (!perDevice) pipelineCache.set(device, (perDevice = new Map()));
  return perDevice;
}

function sortedConstants(k: { constants?: Readonly<Record<string, number>> }): Array<[string, number]> {
  return Object.entries(k.constants ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
}

function pipelineKey(k: { label: string; workgroupSize: number; constants?: Readonly<Record<string, number>> }): string {
  return [`${k.label}#${k.workgroupSize}`, ...sortedConstants(k).map(([name, v]) => `${name}=${v}`)].join('#');
}

function pipelineDescriptor(
  k: { label: string; workgroupSize: number; entryPoint?: string; constants?: Readonly<Record<string, number>> },
  module: GPUShaderModule,
): GPUComputePipelineDescriptor {
  return {
    label: k.label,
    layout: 'auto',
    compute: { module, entryPoint: k.entryPoint ?? 'main', constants: { workgroupSize: k.workgroupSize, ...Object.fromEntries(sortedConstants(k)) } },
  };
}

/** Splits `total` workgroups into an [x, y] grid; WGSL recovers the index as wid.y * nwg.x + wid.x. */
export function grid2d(total: number, maxPerDim = 65535): [number, number] {
  if (total <= 0) return [0, 0];
  if (total <= maxPerDim) return [total, 1];
  const y = Math.ceil(total / maxPerDim);
  return [Math.ceil(total / y), y];
}

/**
 * A kernel's whole WGSL: the feature's directives, common.wgsl, the uniform structs written from
 * their layouts, a marker line, then its own source (the layout wgslLocation maps compiler lines
 * back through).
 */
export function kernelSource(file: string, wgsl: string, requires?: KernelFeature, uniforms: ReadonlyArray<UniformLayout<string>> = []): string {
  const directives = requires ? FEATURE_DIRECTIVES[requires] : '';
  const structs = uniforms.map((u) => u.wgsl).join('');
  return `${directives}${commonWGSL}\n${structs}${fileMarker(file)}\n${wgsl}`;
}

const fileMarker = (file: string) => `// ---- ${file}.wgsl ----`;

export function defineKernel<C, const BN extends string, const N extends string>(
  spec: KernelSpec<C, BN, N>,
): DefinedKernel<Record<BN, BufferArg>, C> {
  type B = Record<BN, BufferArg>;
  const wg = spec.workgroupSize;
  if (!(wg > 0 && (wg & (wg - 1)) === 0)) throw new Error(`${spec.label}: workgroup size ${wg} must be a power of two`);
  const source = kernelSource(spec.file ?? spec.label, spec.wgsl, spec.requires, spec.fileUniforms ?? [spec.uniform]);
  const base = {
    label: spec.label,
    source,
    workgroupSize: wg,
    ...(spec.requires ? { requires: spec.requires } : {}),
    ...(spec.entryPoint ? { entryPoint: spec.entryPoint } : {}),
    ...(spec.file ? { file: spec.file } : {}),
  };
  const slots: Array<[BN, number]> = Array.isArray(spec.bindings)
    ? (spec.bindings as readonly BN[]).map((name, i) => [name, i + 1])
    : (Object.entries(spec.bindings) as Array<[BN, number]>);
  return {
    ...base,
    uniform: spec.uniform,
    pipelines(config?: C): KernelPipeline[] {
      if (!spec.specialize) return [base];
      if (config === undefined) throw new Error(`${spec.label}: its pipeline is compiled for its configuration (specialize); pass one`);
      spec.check?.(config);
      const constants = spec.specialize(config);
      return [Object.keys(constants).length ? { ...base, constants } : base];
    },
    create(device: GPUDevice): Kernel<B, C> {
      // Compiled at the first bind() that needs it, unless compileKernels compiled it ahead.
      const pipelineFor = (constants?: Readonly<Record<string, number>>) =>
        getPipeline(device, { ...base, ...(constants && Object.keys(constants).length ? { constants } : {}) }).pipeline;
      const owned: GPUBuffer[] = [];
      const maxDim = device.limits.maxComputeWorkgroupsPerDimension;
      return {
        label: spec.label,
        bind(buffers, config, label = spec.label) {
          spec.check?.(config);
          const constants = spec.specialize?.(config);
          const pipeline = pipelineFor(constants);
          const uniform = device.createBuffer({
            label: `${label} uniform`,
            size: spec.uniform.size,
            usage: BufferUsage.UNIFORM | BufferUsage.COPY_DST,
          });
          owned.push(uniform);
          device.queue.writeBuffer(uniform, 0, spec.uniform.pack(spec.values(config)));
          const entries: GPUBindGroupEntry[] = [{ binding: 0, resource: { buffer: uniform } }];
          for (const [name, binding] of slots) {
            const b = buffers[name] as BufferArg | undefined;
            if (!b) throw new Error(`${label}: missing buffer "${name}"`);
            entries.push({ binding, resource: 'buffer' in b ? b : { buffer: b } });
          }
          const bindGroup = device.createBindGroup({ label, layout: pipeline.getBindGroupLayout(0), entries });
          const call = {
            label,
            pipeline,
            bindGroup,
            uniform,
            workgroups: grid2d(spec.workgroups(config), maxDim) as readonly [number, number],
            update(c: C) {
              spec.check?.(c);
              const now = spec.specialize?.(c);
              for (const [name, v] of Object.entries(now ?? {})) {
                if (constants?.[name] !== v) {
                  throw new Error(`${label}: ${name} ${constants?.[name]} -> ${v} needs a call of its own (the pipeline is compiled for ${name} ${constants?.[name]})`);
                }
              }
              call.workgroups = grid2d(spec.workgroups(c), maxDim);
              device.queue.writeBuffer(uniform, 0, spec.uniform.pack(spec.values(c)));
            },
          };
          return call;
        },
        encode(pass, call) {
          const [x, y] = call.workgroups;
          if (x === 0 || y === 0) return;
          pass.setPipeline(call.pipeline);
          pass.setBindGroup(0, call.bindGroup);
          pass.dispatchWorkgroups(x, y);
        },
        destroy() {
          for (const b of owned.splice(0)) b.destroy();
        },
      };
    },
  };
}

/**
 * File and line of a line number in a joined kernel source (kernelSource; `file`: the kernel's WGSL
 * file, without .wgsl): its feature directives, common.wgsl, its uniform structs, or its own file.
 */
export function wgslLocation(source: string, file: string, lineNum: number, requires?: KernelFeature): string {
  const lines = source.split('\n');
  const d = requires ? FEATURE_DIRECTIVES[requires].split('\n').length - 1 : 0;
  const common = commonWGSL.split('\n').length;
  const marker = lines.indexOf(fileMarker(file)) + 1;
  if (lineNum <= d) return `${file} directives:${lineNum}`;
  if (lineNum <= d + common) return `common.wgsl:${lineNum - d}`;
  if (lineNum <= marker) return `${file} uniform structs (kernels/*.ts uniformLayout):${lineNum - d - common}`;
  return `${file}.wgsl:${lineNum - marker}`;
}

/** Kernels that did not compile, each with its WGSL file and line where the compiler gave one. */
export class KernelCompileError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`WebGPU kernels failed to compile:\n${problems.join('\n')}`);
    this.name = 'KernelCompileError';
  }
}

/** Whether `device` can compile `k` (it was created with the feature the kernel requires). */
export function deviceSupports(device: GPUDevice, k: { requires?: KernelFeature }): boolean {
  return !k.requires || device.features.has(k.requires);
}

/**
 * Compiles the given pipelines on `device` and checks each module's compilation messages and each
 * pipeline's creation; throws one KernelCompileError naming every kernel that failed (file and
 * line). A backend calls it with the pipelines it will bind (workers/core/gpuBackend.ts
 * openGpuBackend), so a WGSL typo fails loudly instead of producing zeros. Kernels needing a
 * feature the device was not created with are skipped: nothing dispatches them there.
 * All pipelines are asked for at once (createComputePipelineAsync), so a browser can compile them
 * side by side instead of one per round trip; the pipelines it returns are cached for getPipeline.
 */
export async function compileKernels(device: GPUDevice, kernels: ReadonlyArray<KernelPipeline>): Promise<void> {
  const perDevice = devicePipelines(device);
  const unique = [...new Map(kernels.filter((k) => deviceSupports(device, k)).map((k) => [pipelineKey(k), k])).values()];
  const checks = unique.map(async (k): Promise<string[]> => {
    const problems: string[] = [];
    const key = pipelineKey(k);
    let entry = perDevice.get(key);
    let module = entry?.module;
    if (!module) {
      // The module's own errors go to these scopes; the pipeline's come back as a rejection.
      device.pushErrorScope('validation');
      device.pushErrorScope('internal');
      const m = (module = device.createShaderModule({ label: k.label, code: k.source }));
      const [internal, validation] = [device.popErrorScope(), device.popErrorScope()];
      const created = device.createComputePipelineAsync(pipelineDescriptor(k, m)).then(
        (pipeline) => ({ pipeline }),
        (error: unknown) => ({ error: error as { message?: string; reason?: string } }),
      );
      const [internalError, validationError, result] = await Promise.all([internal, validation, created]);
      if (validationError) problems.push(`${k.label}: pipeline validation error: ${validationError.message}`);
      if (internalError) problems.push(`${k.label}: internal error: ${internalError.message}`);
      if ('error' in result) {
        // An invalid module makes its pipeline invalid too; that second error says nothing new.
        const kind = result.error.reason === 'internal' ? 'internal error' : 'pipeline validation error';
        if (!validationError) problems.push(`${k.label}: ${kind}: ${result.error.message ?? String(result.error)}`);
      } else {
        entry = perDevice.get(key) ?? { module: m, pipeline: result.pipeline, used: false, compiled: 'async' };
        perDevice.set(key, entry);
      }
    }
    const info = await (entry ? (entry.compilation ??= entry.module.getCompilationInfo()) : module.getCompilationInfo());
    const messages = info.messages
      .filter((m) => m.type === 'error')
      .map((m) => `${wgslLocation(k.source, k.file ?? k.label, m.lineNum, k.requires)}:${m.linePos}: ${m.message}`);
    return [...messages, ...problems];
  });
  const problems = (await Promise.all(checks)).flat();
  if (problems.length) throw new KernelCompileError(problems);
}
