/**
 * Executables of the WebGPU device: a WGSL module and one compute pipeline per export, with explicit
 * layouts (see binding-layouts.ts and wgsl-source.ts for the conventions).
 */
import { ErrorCode, KeelError } from '@keel/fence';
import {
  createExecutableExports,
  type Device,
  describeValue,
  type Executable,
  type ExecutableExport,
  type ExecutableSource,
  lookupExport,
} from '@keel/hal';
import { invalid } from '@keel/hal/driver';
import { unavailable } from './acquire-gpu-device';
import type { BindingLayout, BindingLayouts } from './binding-layouts';
import { MAX_CONSTANTS } from './device-info';
import { describeError, fromGpuError, popErrorScopes, pushErrorScopes } from './gpu-errors';
import { prepareWgsl } from './wgsl-source';

/** What the device needs of one export to encode its dispatches. */
export interface CompiledExport {
  readonly pipeline: GPUComputePipeline;
  readonly bindings: BindingLayout;
  readonly constantCount: number;
  /** The export's name and its executable's label (trace events name dispatches by them). */
  readonly name: string;
  readonly executable: string;
}

export class WebGpuExecutable implements Executable {
  declare readonly device: Device;
  declare readonly label: string | undefined;
  declare readonly exports: readonly ExecutableExport[];
  declare readonly compiled: readonly CompiledExport[];
  constructor(
    device: Device,
    label: string | undefined,
    exports: readonly ExecutableExport[],
    /** Indexed like `exports`. */
    compiled: readonly CompiledExport[],
  ) {
    this.device = device;
    this.label = label;
    this.exports = exports;
    this.compiled = compiled;
  }

  lookupExport(entry: string | number): ExecutableExport {
    return lookupExport(this.exports, entry, this.label === undefined ? '(unnamed)' : `'${this.label}'`);
  }
}

/** The limits an executable is checked against. */
export interface ExecutableLimits {
  readonly maxBindings: number;
  readonly maxInvocationsPerWorkgroup: number;
  readonly maxWorkgroupSize: readonly [number, number, number];
}

/**
 * Compiles a WGSL source: UNIMPLEMENTED for another format; INVALID_ARGUMENT naming the executable and
 * the rule for bad exports, WGSL compilation errors (with line:column) and pipeline creation failures
 * (e.g. a missing entry point).
 */
export async function compileExecutable(
  owner: Device,
  gpu: GPUDevice,
  layouts: BindingLayouts,
  limits: ExecutableLimits,
  source: ExecutableSource,
  /** UNAVAILABLE when the device is lost or destroyed, else undefined. */
  unavailable: () => KeelError | undefined,
): Promise<WebGpuExecutable> {
  if (source === null || typeof source !== 'object') {
    throw invalid('createExecutable: source must be an object { format, ... }');
  }
  if (source.format !== 'wgsl') {
    throw new KeelError(
      ErrorCode.UNIMPLEMENTED,
      `createExecutable: the webgpu device takes 'wgsl' sources, not ${describeValue(source.format)}`,
    );
  }
  const label = source.label;
  const name = label === undefined ? '(unnamed)' : `'${label}'`;
  // How messages name the executable.
  const exe = `executable ${name}`;
  if (typeof source.code !== 'string') throw invalid(`${exe}: code must be a WGSL string`);
  const exports = createExecutableExports(source.exports, name, {
    maxBindings: limits.maxBindings,
    maxConstants: MAX_CONSTANTS,
  });
  for (const e of exports) {
    const what = `${exe} export '${e.name}'`;
    const [x, y, z] = e.workgroupSize;
    const max = limits.maxWorkgroupSize;
    if (x > max[0] || y > max[1] || z > max[2] || x * y * z > limits.maxInvocationsPerWorkgroup) {
      throw invalid(
        `${what}: workgroup size [${x}, ${y}, ${z}] exceeds the device's limits ([${max.join(', ')}], ${limits.maxInvocationsPerWorkgroup} invocations)`,
      );
    }
  }
  const prepared = prepareWgsl(source.code);
  for (const e of exports) {
    const shader = prepared.workgroupSizes.get(e.name);
    const [x, y, z] = e.workgroupSize;
    if (shader !== undefined && (shader[0] !== x || shader[1] !== y || shader[2] !== z)) {
      throw invalid(
        `${exe} export '${e.name}': workgroupSize [${x}, ${y}, ${z}] differs from the @workgroup_size(${shader.join(', ')}) of its WGSL entry point; they must match (workgroup counts are computed from the declared size)`,
      );
    }
  }
  // A lost device (or a reclaimed instance) is UNAVAILABLE, whatever WebGPU says about it.
  const lostOr = async (error: KeelError): Promise<KeelError> => {
    const lost = unavailable() ?? (await lostSoon(gpu));
    return lost ? (unavailable() ?? unavailableError(exe, error)) : error;
  };
  // The scopes keep compilation and layout errors from reaching the device's uncaptured-error handler.
  pushErrorScopes(gpu);
  let module: GPUShaderModule;
  let scope: Promise<GPUError | undefined>;
  const layoutsOf: GPUPipelineLayout[] = [];
  const bindingsOf: BindingLayout[] = [];
  try {
    module = gpu.createShaderModule({ code: prepared.code, label: label ?? 'keel executable' });
    for (const e of exports) {
      let kinds = '';
      for (let i = 0; i < e.bindingCount; i++) kinds += prepared.group0.get(i) ?? 's';
      const bindings = layouts.bindings(kinds);
      bindingsOf.push(bindings);
      layoutsOf.push(layouts.pipelineLayout(bindings, e.constantCount > 0));
    }
  } finally {
    // Popped whatever happened (the scopes are a stack shared with every other caller).
    scope = popErrorScopes(gpu);
  }
  let info: GPUCompilationInfo;
  try {
    info = await module.getCompilationInfo();
  } catch (cause) {
    await scope;
    throw await lostOr(invalid(`${exe}: WebGPU could not compile it (${describeError(cause)})`, cause));
  }
  const scopeError = await scope;
  const errors = info.messages.filter((m) => m.type === 'error');
  if (errors.length > 0) {
    const text = errors.map((m) => `${m.lineNum}:${m.linePos}: ${m.message}`).join('; ');
    throw await lostOr(invalid(`${exe}: WGSL does not compile: ${text}`));
  }
  if (scopeError !== undefined) throw await lostOr(fromGpuError(scopeError, exe));
  const compiled: CompiledExport[] = [];
  for (let k = 0; k < exports.length; k++) {
    const e = exports[k] as ExecutableExport;
    let pipeline: GPUComputePipeline;
    try {
      pipeline = await gpu.createComputePipelineAsync({
        label: `${label ?? 'keel'}:${e.name}`,
        layout: layoutsOf[k] as GPUPipelineLayout,
        compute: { module, entryPoint: e.name },
      });
    } catch (cause) {
      throw await lostOr(
        invalid(
          `${exe} export '${e.name}': WebGPU could not create its pipeline (${describeError(cause)})`,
          cause,
        ),
      );
    }
    compiled.push({
      pipeline,
      bindings: bindingsOf[k] as BindingLayout,
      constantCount: e.constantCount,
      name: e.name,
      executable: label ?? 'wgsl',
    });
  }
  // Dawn hands out (invalid) pipelines on a destroyed device without an error: check for loss last.
  const lost = unavailable() ?? ((await lostSoon(gpu)) ? unavailable() : undefined);
  if (lost !== undefined) throw lost;
  return new WebGpuExecutable(owner, label, exports, compiled);
}

/** True when `gpu.lost` settles within a macrotask (a destroyed or lost device reports it by then). */
function lostSoon(gpu: GPUDevice): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), 0);
    const lost = () => {
      clearTimeout(timer);
      resolve(true);
    };
    gpu.lost.then(lost, lost);
  });
}

function unavailableError(exe: string, error: KeelError): KeelError {
  return unavailable(`${exe}: the GPU device was lost (${error.message})`, error);
}
