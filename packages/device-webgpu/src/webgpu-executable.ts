/**
 * Executables of the WebGPU device: a WGSL module and one compute pipeline per export, with explicit
 * layouts (see binding-layouts.ts and wgsl-source.ts for the conventions).
 */
import { ErrorCode, KeelError } from '@keel/fence';
import {
  createExecutableExports,
  type Device,
  type Executable,
  type ExecutableExport,
  type ExecutableSource,
  lookupExport,
} from '@keel/hal';
import type { BindingLayout, BindingLayouts } from './binding-layouts';
import { MAX_CONSTANTS } from './device-info';
import { prepareWgsl } from './wgsl-source';

/** What the device needs of one export to encode its dispatches. */
export interface CompiledExport {
  readonly pipeline: GPUComputePipeline;
  readonly bindings: BindingLayout;
  /** 's'/'u' per binding. */
  readonly kinds: string;
  readonly constantCount: number;
}

export class WebGpuExecutable implements Executable {
  constructor(
    readonly device: Device,
    readonly label: string | undefined,
    readonly exports: readonly ExecutableExport[],
    /** Indexed like `exports`. */
    readonly compiled: readonly CompiledExport[],
  ) {}

  lookupExport(entry: string | number): ExecutableExport {
    return lookupExport(this.exports, entry, this.label === undefined ? '(unnamed)' : `'${this.label}'`);
  }
}

function invalid(message: string, cause?: unknown): KeelError {
  return new KeelError(ErrorCode.INVALID_ARGUMENT, message, cause === undefined ? undefined : { cause });
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
): Promise<WebGpuExecutable> {
  if (source === null || typeof source !== 'object') {
    throw invalid('createExecutable: source must be an object { format, ... }');
  }
  if (source.format !== 'wgsl') {
    throw new KeelError(
      ErrorCode.UNIMPLEMENTED,
      `createExecutable: the webgpu device takes 'wgsl' sources, not '${String(source.format)}'`,
    );
  }
  const label = source.label;
  const name = label === undefined ? '(unnamed)' : `'${label}'`;
  if (typeof source.code !== 'string') throw invalid(`executable ${name}: code must be a WGSL string`);
  const exports = createExecutableExports(source.exports, name);
  for (const e of exports) {
    const what = `executable ${name} export '${e.name}'`;
    if (e.bindingCount > limits.maxBindings) {
      throw invalid(
        `${what}: ${e.bindingCount} bindings exceed the device's maxBindings of ${limits.maxBindings}`,
      );
    }
    if (e.constantCount > MAX_CONSTANTS) {
      throw invalid(
        `${what}: ${e.constantCount} constants exceed the device's maxConstants of ${MAX_CONSTANTS}`,
      );
    }
    const [x, y, z] = e.workgroupSize;
    const max = limits.maxWorkgroupSize;
    if (x > max[0] || y > max[1] || z > max[2] || x * y * z > limits.maxInvocationsPerWorkgroup) {
      throw invalid(
        `${what}: workgroup size [${x}, ${y}, ${z}] exceeds the device's limits ([${max.join(', ')}], ${limits.maxInvocationsPerWorkgroup} invocations)`,
      );
    }
  }
  const prepared = prepareWgsl(source.code);
  // The scope keeps a compilation error from also reaching the device's uncaptured-error handler.
  gpu.pushErrorScope('validation');
  const module = gpu.createShaderModule({ code: prepared.code, label: label ?? 'keel executable' });
  const scope = gpu.popErrorScope();
  const info = await module.getCompilationInfo();
  await scope;
  const errors = info.messages.filter((m) => m.type === 'error');
  if (errors.length > 0) {
    const text = errors.map((m) => `${m.lineNum}:${m.linePos}: ${m.message}`).join('; ');
    throw invalid(`executable ${name}: WGSL does not compile: ${text}`);
  }
  const compiled: CompiledExport[] = [];
  for (const e of exports) {
    let kinds = '';
    for (let i = 0; i < e.bindingCount; i++) kinds += prepared.group0.get(i) ?? 's';
    const bindings = layouts.bindings(kinds);
    const layout = layouts.pipelineLayout(bindings, e.constantCount > 0);
    let pipeline: GPUComputePipeline;
    try {
      pipeline = await gpu.createComputePipelineAsync({
        label: `${label ?? 'keel'}:${e.name}`,
        layout,
        compute: { module, entryPoint: e.name },
      });
    } catch (cause) {
      const reason = cause instanceof Error ? cause.message : String(cause);
      throw invalid(
        `executable ${name} export '${e.name}': WebGPU could not create its pipeline (${reason})`,
        cause,
      );
    }
    compiled.push({ pipeline, bindings, kinds, constantCount: e.constantCount });
  }
  return new WebGpuExecutable(owner, label, exports, compiled);
}
