/**
 * Executables: compiled kernels a device made from a backend-specific source (WGSL for WebGPU, an ES
 * module for the CPU). Each export declares its binding and constant counts and its workgroup size, and
 * maps a workload to a workgroup count (seed 004: the workload is what the caller knows, the count is
 * what the backend decides). The count function is a pure function of the workload, so it can run on
 * the host at record time, or be mirrored by a device-side kernel that writes indirect parameters.
 */
import { describeValue, ErrorCode, KeelError } from '@keel/fence';
import type { Device } from './device';
import { invalid } from './driver/invalid';

export type WorkgroupCount = readonly [x: number, y: number, z: number];
export type WorkgroupSize = readonly [x: number, y: number, z: number];

/** The part of an export a source declares. */
export interface ExportDescriptor {
  readonly name: string;
  /** Number of buffer bindings the entry point reads or writes (binding i ↔ `bindings[i]`). */
  readonly bindingCount: number;
  /** Number of 32-bit constants the entry point takes. */
  readonly constantCount: number;
  /** Invocations per workgroup; defaults to [1, 1, 1]. */
  readonly workgroupSize?: WorkgroupSize;
  /**
   * Maps a workload to a workgroup count. Defaults to `ceil(workload[i] / workgroupSize[i])` per
   * dimension (missing dimensions count as 1).
   */
  readonly workgroupCount?: (workload: readonly number[]) => WorkgroupCount;
}

export interface ExecutableExport {
  readonly index: number;
  readonly name: string;
  readonly bindingCount: number;
  readonly constantCount: number;
  readonly workgroupSize: WorkgroupSize;
  workgroupCount(workload: readonly number[]): WorkgroupCount;
}

export interface Executable {
  readonly device: Device;
  readonly label?: string | undefined;
  readonly exports: readonly ExecutableExport[];
  /** The export with this name or index; NOT_FOUND otherwise. */
  lookupExport(entry: string | number): ExecutableExport;
}

/** WGSL source for WebGPU; each export names an `@compute` entry point of `code`. */
export interface WgslExecutableSource {
  readonly format: 'wgsl';
  readonly code: string;
  readonly exports: readonly ExportDescriptor[];
  readonly label?: string;
}

/**
 * An ES module for the CPU device, loaded by URL in every worker; each export names a function of the
 * module, called once per workgroup (see @keel/device-cpu for the kernel signature).
 */
export interface JsModuleExecutableSource {
  readonly format: 'js-module';
  readonly url: string | URL;
  readonly exports: readonly ExportDescriptor[];
  readonly label?: string;
}

export type ExecutableSource = WgslExecutableSource | JsModuleExecutableSource;

/** The default workload → workgroup count policy for a workgroup size. */
export function ceilDivWorkgroupCount(
  workgroupSize: WorkgroupSize,
): (workload: readonly number[]) => WorkgroupCount {
  return (workload) => [
    Math.ceil((workload[0] ?? 1) / workgroupSize[0]),
    Math.ceil((workload[1] ?? 1) / workgroupSize[1]),
    Math.ceil((workload[2] ?? 1) / workgroupSize[2]),
  ];
}

function checkCount(value: number, what: string): void {
  if (!Number.isInteger(value) || value < 0) {
    throw invalid(`${what} must be a non-negative integer, got ${describeValue(value)}`);
  }
}

/**
 * Validates export descriptors and turns them into exports (for device implementations). Throws
 * INVALID_ARGUMENT naming the export and the rule: descriptors objects, names unique and non-empty,
 * counts non-negative integers, workgroup size three positive integers, `workgroupCount` (when given) a
 * function. (Command buffers check its workload and result and wrap its exceptions at record time.)
 */
export function createExecutableExports(
  descriptors: readonly ExportDescriptor[],
  executableName: string,
  /** The device's limits (DeviceLimits): an export taking more bindings or constants is refused. */
  limits?: { readonly maxBindings: number; readonly maxConstants: number },
): ExecutableExport[] {
  if (!Array.isArray(descriptors) || descriptors.length === 0) {
    throw invalid(`executable ${executableName}: needs at least one export`);
  }
  const seen = new Set<string>();
  return descriptors.map((d, index) => {
    const what = `executable ${executableName} export ${index}`;
    if (d === null || typeof d !== 'object') {
      throw invalid(
        `${what}: must be an export descriptor { name, bindingCount, constantCount, ... }, got ${describeValue(d)}`,
      );
    }
    if (typeof d.name !== 'string' || d.name.length === 0) {
      throw invalid(`${what}: name must be a non-empty string`);
    }
    if (seen.has(d.name)) {
      throw invalid(`${what}: name '${d.name}' is declared twice`);
    }
    seen.add(d.name);
    const named = `${what} '${d.name}'`;
    checkCount(d.bindingCount, `${named}: bindingCount`);
    checkCount(d.constantCount, `${named}: constantCount`);
    if (limits !== undefined && d.bindingCount > limits.maxBindings) {
      throw invalid(
        `${named}: ${d.bindingCount} bindings exceed the device's maxBindings of ${limits.maxBindings}`,
      );
    }
    if (limits !== undefined && d.constantCount > limits.maxConstants) {
      throw invalid(
        `${named}: ${d.constantCount} constants exceed the device's maxConstants of ${limits.maxConstants}`,
      );
    }
    const size: WorkgroupSize = d.workgroupSize ?? [1, 1, 1];
    if (!Array.isArray(size) || size.length !== 3 || size.some((s) => !Number.isInteger(s) || s < 1)) {
      throw invalid(`${named}: workgroupSize must be three positive integers, got ${describeValue(size)}`);
    }
    if (d.workgroupCount !== undefined && typeof d.workgroupCount !== 'function') {
      throw invalid(
        `${named}: workgroupCount must be a function (workload) => [x, y, z], got ${describeValue(d.workgroupCount)}`,
      );
    }
    const count = d.workgroupCount ?? ceilDivWorkgroupCount(size);
    return {
      index,
      name: d.name,
      bindingCount: d.bindingCount,
      constantCount: d.constantCount,
      workgroupSize: [size[0], size[1], size[2]] as const,
      workgroupCount: count,
    };
  });
}

/** Finds an export by name or index; NOT_FOUND naming the executable otherwise. */
export function lookupExport(
  exports: readonly ExecutableExport[],
  entry: string | number,
  executableName: string,
): ExecutableExport {
  const found = typeof entry === 'number' ? exports[entry] : exports.find((e) => e.name === entry);
  if (!found) {
    throw new KeelError(
      ErrorCode.NOT_FOUND,
      `executable ${executableName}: no export ${typeof entry === 'number' ? `#${entry}` : `'${entry}'`}`,
    );
  }
  return found;
}
