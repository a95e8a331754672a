/**
 * Whether this machine has WebGPU, decided once per test file (top-level await) so suites can use
 * `describe.skipIf`. With CI set, a missing adapter is a failure, not a skip: CI installs lavapipe.
 */
import { ErrorCode, KeelError } from '@keel/fence';
import { createWebGpuDevice, type WebGpuDevice } from '../src/index';

export interface Probe {
  readonly available: boolean;
  /** One line: why the suite is skipped. */
  readonly reason: string;
}

function ci(): boolean {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  return env?.CI !== undefined && env.CI !== '' && env.CI !== 'false';
}

/** Tries to create a device; UNAVAILABLE means no WebGPU here (a failure under CI). */
export async function probeWebGpu(): Promise<Probe> {
  let device: WebGpuDevice | undefined;
  try {
    device = await createWebGpuDevice();
    return { available: true, reason: '' };
  } catch (error) {
    if (ci() || !KeelError.is(error, ErrorCode.UNAVAILABLE)) throw error;
    return { available: false, reason: `skipped, no WebGPU adapter: ${error.message}` };
  } finally {
    await device?.destroy();
  }
}
