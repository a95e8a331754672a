/**
 * The statistics of the queue allocator behind a device's `queueAlloca` (the 'tlsf' pool both devices
 * use by default). hal's Device has no statistics accessor; the CPU and WebGPU devices each expose
 * theirs (`allocatorStats()`), with different signatures.
 */
import type { AllocatorStats } from '@keel/allocator';
import { CpuDevice } from '@keel/device-cpu';
import { WebGpuDevice } from '@keel/device-webgpu';
import type { Device } from '@keel/hal';

/** The transient ('tlsf') allocator's statistics, or undefined when the device does not expose them. */
export function transientAllocatorStats(device: Device): AllocatorStats | undefined {
  if (device instanceof CpuDevice) return device.allocatorStats().get('tlsf');
  if (device instanceof WebGpuDevice) return device.allocatorStats('tlsf');
  return undefined;
}
