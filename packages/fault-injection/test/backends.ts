/**
 * The backends every fault-injection test runs on: cpu `sync`, cpu `task` and WebGPU (Dawn in Node).
 * Each backend makes devices and the one kernel the suite dispatches everywhere, `add_const`
 * (binding 0: u32 data, read-write; constants: value, n; workgroup size 64; data[i] += value for i < n).
 * WebGPU is probed once per file: without an adapter its tests skip with the reason in their title,
 * unless CI is set, where a missing adapter fails the run (as the device package's own tests do).
 */
import { createCpuDevice } from '@keel/device-cpu';
import { createWebGpuDevice, type WebGpuDevice } from '@keel/device-webgpu';
import { ErrorCode, KeelError } from '@keel/fence';
import type { Device, Executable, ExportDescriptor } from '@keel/hal';

export type BackendName = 'cpu-sync' | 'cpu-task' | 'webgpu';

export interface Backend {
  readonly name: BackendName;
  /** False where the backend cannot run here; `reason` says why (one line). */
  readonly available: boolean;
  readonly reason: string;
  /** A fresh device with `queues` queues (2 by default). */
  create(queues?: number): Promise<Device>;
  /** The `add_const` executable on `device`. */
  addConst(device: Device): Promise<Executable>;
  /**
   * A device whose queue allocations of `pool` can hold at most `budget` bytes at once (cpu: the ring
   * pool's `ringCapacity`; WebGPU: `transientBudget`).
   */
  createBudgeted(budget: number): Promise<{ device: Device; pool: 'ring' | 'tlsf' }>;
}

export const KERNELS = new URL('./fixtures/kernels.js', import.meta.url);

export const ADD_CONST: ExportDescriptor = {
  name: 'add_const',
  bindingCount: 1,
  constantCount: 2,
  workgroupSize: [64, 1, 1],
};

export const ADD_CONST_WGSL = `
struct C { value: u32, n: u32 }
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@group(1) @binding(0) var<uniform> c: C;
@compute @workgroup_size(64)
fn add_const(@builtin(global_invocation_id) g: vec3<u32>) {
  if (g.x < c.n && g.x < arrayLength(&data)) { data[g.x] = data[g.x] + c.value; }
}`;

/**
 * WebGPU errors nobody captured, from every device this suite opens (Keel must capture its own, so
 * tests assert this stays empty; see `expectNoGpuErrors`).
 */
export const uncapturedGpuErrors: string[] = [];
const onUncapturedError = (error: { readonly message: string }): void => {
  uncapturedGpuErrors.push(error.message);
};

function ci(): boolean {
  const env = process.env.CI;
  return env !== undefined && env !== '' && env !== 'false';
}

function cpu(mode: 'sync' | 'task'): Backend {
  return {
    name: mode === 'sync' ? 'cpu-sync' : 'cpu-task',
    available: true,
    reason: '',
    create: async (queues = 2) => createCpuDevice({ mode, queues, workersPerQueue: 1 }),
    addConst: (device) =>
      device.createExecutable({
        format: 'js-module',
        url: KERNELS,
        exports: [ADD_CONST],
        label: 'fault-kernels',
      }),
    createBudgeted: async (budget) => ({
      device: createCpuDevice({ mode, queues: 2, workersPerQueue: 1, ringCapacity: budget }),
      pool: 'ring',
    }),
  };
}

/** Tries to open a WebGPU device once; UNAVAILABLE means no adapter here (a failure under CI). */
async function probeWebGpu(): Promise<{ available: boolean; reason: string }> {
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

/** Every backend; WebGPU is probed (call once per test file, at top level). */
export async function backends(): Promise<readonly Backend[]> {
  const probe = await probeWebGpu();
  const webgpu: Backend = {
    name: 'webgpu',
    available: probe.available,
    reason: probe.reason,
    create: (queues = 2) => createWebGpuDevice({ queueCount: queues, onUncapturedError }),
    addConst: (device) =>
      device.createExecutable({
        format: 'wgsl',
        code: ADD_CONST_WGSL,
        exports: [ADD_CONST],
        label: 'fault-kernels',
      }),
    createBudgeted: async (budget) => ({
      device: await createWebGpuDevice({ transientBudget: budget }),
      pool: 'tlsf',
    }),
  };
  return [cpu('sync'), cpu('task'), webgpu];
}

/** The describe title of a backend: its name, and the skip reason where it is unavailable. */
export function title(backend: Backend): string {
  return backend.available ? backend.name : `${backend.name} (${backend.reason})`;
}
