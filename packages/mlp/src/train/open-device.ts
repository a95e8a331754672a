/**
 * The device a training run uses, and the MLP executable for its backend (`createMlpExecutable`: where
 * the CPU kernel module does not load, the error names the `cpuKernelUrl` option that gave its URL, or
 * says how to provide it when it does not load from its default URL).
 *
 * The run needs two queues: queue 0 computes (alloca, execute, loss read, dealloca), queue 1 uploads
 * batches. On the CPU device every core works on queue 0 (`workersPerQueue` = cores): queue 1 only
 * carries transfers, which the CPU device runs on the main thread, so its workers stay idle.
 */
import { createCpuDevice } from '@keel/device-cpu';
import { createWebGpuDevice } from '@keel/device-webgpu';
import { describeValue, ErrorCode, KeelError } from '@keel/fence';
import type { Device, Executable, ExecutableSource } from '@keel/hal';
import { mlpCpuExecutableSource } from '../cpu/descriptors';
import { hardwareConcurrency } from '../platform/cores';
import { mlpWgslExecutableSource } from '../webgpu/descriptors';
import { type GemmTiling, wgslGemmTilingFor } from '../webgpu/gemm-tiling';
import type { TrainMlpOptions } from './train-options';

/** Queues a training run needs. */
export const TRAIN_QUEUES = 2;

export interface OpenedDevice {
  readonly device: Device;
  /** True when the run opened the device and must destroy it. */
  readonly owned: boolean;
}

/** Opens the device `options.device` names (or adopts the caller's). */
export async function openTrainingDevice(options: TrainMlpOptions): Promise<OpenedDevice> {
  const kind = options.device ?? 'cpu';
  if (typeof kind === 'object') {
    if (kind.info.queueCount < TRAIN_QUEUES) {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `trainMlp: device '${kind.info.name}' has ${kind.info.queueCount} queue(s); the run needs ${TRAIN_QUEUES} (compute and upload)`,
      );
    }
    return { device: kind, owned: false };
  }
  if (kind === 'cpu') {
    const device = createCpuDevice({
      mode: options.cpuMode ?? 'task',
      queues: TRAIN_QUEUES,
      workersPerQueue: options.workers ?? hardwareConcurrency(),
      label: 'cpu',
    });
    return { device, owned: true };
  }
  if (kind === 'webgpu') {
    const device = await createWebGpuDevice({ ...options.webgpu, queueCount: TRAIN_QUEUES });
    return { device, owned: true };
  }
  throw new KeelError(
    ErrorCode.INVALID_ARGUMENT,
    `trainMlp: device must be 'cpu', 'webgpu' or a Keel Device, got ${describeValue(kind)}`,
  );
}

/** The MLP kernels for `device`'s backend (UNIMPLEMENTED for other backends). */
export function mlpExecutableSource(
  device: Device,
  cpuKernelUrl: string | URL | undefined,
  wgslTiling?: GemmTiling,
): ExecutableSource {
  switch (device.info.backend) {
    case 'cpu':
      return cpuKernelUrl === undefined ? mlpCpuExecutableSource() : mlpCpuExecutableSource(cpuKernelUrl);
    case 'webgpu':
      return mlpWgslExecutableSource(wgslTiling ?? wgslGemmTilingFor(device.info));
    default:
      throw new KeelError(
        ErrorCode.UNIMPLEMENTED,
        `trainMlp: no MLP kernels for backend '${device.info.backend}' (there are 'cpu' and 'webgpu')`,
      );
  }
}

/**
 * `device.createExecutable` of the MLP kernels. Where the CPU kernel module does not load
 * (INVALID_ARGUMENT from the device), the INVALID_ARGUMENT names what to fix: the `cpuKernelUrl`
 * option when one was given, else how to provide the module when it is not at its default URL
 * (beside the bundle: a bundler such as esbuild does not copy it); the device's error is its cause.
 * `what` names the caller (`trainMlp`, …).
 */
export async function createMlpExecutable(
  what: string,
  device: Device,
  cpuKernelUrl: string | URL | undefined,
  wgslTiling?: GemmTiling,
): Promise<Executable> {
  const source = mlpExecutableSource(device, cpuKernelUrl, wgslTiling);
  try {
    return await device.createExecutable(source);
  } catch (error) {
    if (source.format !== 'js-module' || !KeelError.is(error, ErrorCode.INVALID_ARGUMENT)) throw error;
    if (cpuKernelUrl !== undefined) {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `${what}: option 'cpuKernelUrl' (${String(cpuKernelUrl)}) does not give a loadable MLP CPU kernel module (${error.message}); give the URL of @keel/mlp's dist/kernels/mlp-cpu.js, or leave the option out`,
        { cause: error },
      );
    }
    throw new KeelError(
      ErrorCode.INVALID_ARGUMENT,
      `${what}: the MLP's CPU kernel module did not load from ${String(source.url)}, beside the bundle (${error.message}). Bundlers that do not copy \`new URL(..., import.meta.url)\` assets (esbuild) need @keel/mlp's dist/kernels/mlp-cpu.js copied beside the bundle as kernels/mlp-cpu.js, or its URL given as cpuKernelUrl (@keel/mlp README § Install)`,
      { cause: error },
    );
  }
}
