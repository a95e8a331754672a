/**
 * The factory of the CPU device. Synchronous: in task mode the workers start in the background, and
 * work submitted before they are up waits in their message queues.
 */
import { CpuDevice, type CpuDeviceOptions } from './cpu-device';

/**
 * Creates a CPU device: `mode` 'task' (default; worker threads per queue, SharedArrayBuffer memory) or
 * 'sync' (inline on the calling thread), `queues` (default 2), `workersPerQueue` (task mode; default
 * max(1, floor(cores / queues))). Throws INVALID_ARGUMENT for bad options. Call `destroy()` (or use
 * `await using`) to end the workers.
 */
export function createCpuDevice(options?: CpuDeviceOptions): CpuDevice {
  return new CpuDevice(options);
}
