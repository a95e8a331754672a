/**
 * Device loss in a training run: telling a lost device from other failures, opening the replacement,
 * restoring the parameters from their mirrors, and simulating a loss (`keel demo --lose-device-at`,
 * tests).
 *
 * Promises: `wasLost` is true only when the device's `lost` promise settles (within a grace period)
 * after a KeelError; `restoreParameters` never mixes checkpoints: either every parameter comes from
 * mirrors of the same step, or all restart from the initial parameters (step 0).
 */
import { ErrorCode, KeelError } from '@keel/fence';
import type { Device } from '@keel/hal';
import type { Tensor } from '@keel/tensor-residency';
import { openTrainingDevice } from './open-device';
import type { TrainMlpOptions } from './train-options';

/** How long a failed step waits for the device's `lost` promise before the error counts as not a loss. */
const LOSS_GRACE_MS = 5000;

/** Recoveries one run attempts at most (a device lost again and again is not recoverable). */
export const MAX_RECOVERIES = 16;

/** True when `error` came from `device` being lost or destroyed. */
export async function wasLost(device: Device, error: unknown): Promise<boolean> {
  if (!KeelError.is(error)) return false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const grace = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), LOSS_GRACE_MS);
  });
  try {
    return await Promise.race([device.lost.then(() => true as const), grace]);
  } finally {
    clearTimeout(timer);
  }
}

/** The device replacing `lost`: the caller's `reopenDevice`, else a new one of the same backend. */
export async function reopenDevice(lost: Device, options: TrainMlpOptions): Promise<Device> {
  if (options.reopenDevice !== undefined) return await options.reopenDevice(lost);
  const backend = lost.info.backend;
  if (backend !== 'cpu' && backend !== 'webgpu') {
    throw new KeelError(
      ErrorCode.UNIMPLEMENTED,
      `trainMlp: cannot reopen a '${backend}' device after a loss; pass reopenDevice`,
    );
  }
  const cpuMode = lost.info.features.includes('mode:sync') ? 'sync' : (options.cpuMode ?? 'task');
  const { device } = await openTrainingDevice({ ...options, device: backend, cpuMode });
  return device;
}

/**
 * After a rehome: the step the parameters now hold, and whether they came from mirrors. `released`:
 * steps whose parameter writes were released on the lost device. When some parameter has no mirror
 * (lost before the first landed) or the parameters disagree, every parameter is rewritten with
 * `initial` (in the tensors' order) and training restarts at step 0.
 */
export function restoreParameters(
  tensors: readonly Tensor<'f32'>[],
  initial: readonly Float32Array[],
  released: number,
): { step: number; fromMirror: boolean; rolledBack: number } {
  const recoveries = tensors.map((t) => t.recovery);
  const first = recoveries[0];
  if (
    first !== undefined &&
    recoveries.every((r) => r !== undefined && r.lostUpdates === first.lostUpdates) &&
    first.lostUpdates <= released
  ) {
    return { step: released - first.lostUpdates, fromMirror: true, rolledBack: first.lostUpdates };
  }
  tensors.forEach((t, i) => {
    t.write(initial[i]!);
  });
  return { step: 0, fromMirror: false, rolledBack: released };
}

/**
 * Simulates what a browser does on a driver reset or tab eviction: the device goes away under the
 * run. On WebGPU the raw `GPUDevice` is destroyed (Keel sees it through `device.lost`); elsewhere the
 * Keel device is destroyed. Returns at once; the run notices at its next operation.
 */
export function loseDevice(device: Device): void {
  const gpu = (device as { readonly gpuDevice?: { destroy(): void } }).gpuDevice;
  if (device.info.backend === 'webgpu' && gpu !== undefined) {
    gpu.destroy();
    return;
  }
  device.destroy().catch(() => {});
}
