/**
 * Executables of the CPU device: an ES module URL plus export descriptors. Each export names a function
 * of the module (the kernel, see kernel-abi.ts). The device numbers executables; plans refer to them by
 * that id, and every thread that runs kernels (the main thread in sync mode, each worker in task mode)
 * imports the module once per URL and caches it.
 */
import {
  type Device,
  describeValue,
  ErrorCode,
  type Executable,
  type ExecutableExport,
  type ExportDescriptor,
  KeelError,
  lookupExport,
} from '@keel/hal';
import { invalid } from '@keel/hal/driver';
import type { LoadedKernel } from './executor';

export class CpuExecutable implements Executable {
  // Fields assigned by the constructor are `declare`d: the bundle then names each field once.
  declare readonly device: Device;
  declare readonly id: number;
  declare readonly url: string;
  declare readonly exports: readonly ExecutableExport[];
  /** The source's label, or the last segment of its URL (createExecutable). */
  declare readonly label: string;
  declare readonly name: string;
  /** Kernels bound on the main thread (sync mode only). */
  kernels: readonly LoadedKernel[] | undefined;

  constructor(device: Device, id: number, url: string, exports: readonly ExecutableExport[], label: string) {
    this.device = device;
    this.id = id;
    this.url = url;
    this.exports = exports;
    this.label = label;
    this.name = `'${label}'`;
  }

  lookupExport(entry: string | number): ExecutableExport {
    return lookupExport(this.exports, entry, this.name);
  }
}

/** The URL of a js-module source as a string; INVALID_ARGUMENT for anything else. */
export function moduleUrl(url: unknown, what: string): string {
  if (url instanceof URL) return url.href;
  if (typeof url === 'string') {
    try {
      return new URL(url).href;
    } catch {
      throw invalid(
        `${what}: url '${url}' is not an absolute URL (resolve it against your module: new URL(path, import.meta.url))`,
      );
    }
  }
  throw invalid(`${what}: url must be a string or URL, got ${describeValue(url)}`);
}

/** Binds export descriptors to the functions of an imported module namespace (NOT_FOUND if missing). */
export function bindKernels(
  namespace: Record<string, unknown>,
  descriptors: readonly ExportDescriptor[],
  exports: readonly ExecutableExport[],
  label: string,
  url: string,
): LoadedKernel[] {
  return exports.map((exp, i) => {
    const fn = namespace[descriptors[i]!.name];
    if (typeof fn !== 'function') {
      throw new KeelError(
        ErrorCode.NOT_FOUND,
        `executable '${label}': module ${url} has no exported function '${exp.name}'`,
      );
    }
    return {
      name: `kernel '${exp.name}' of executable '${label}'`,
      fn: fn as LoadedKernel['fn'],
      workgroupSize: exp.workgroupSize,
    };
  });
}
