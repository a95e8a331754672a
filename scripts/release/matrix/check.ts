// The consumer matrix's typed program (scripts/release-dry.mjs copies it to check.mts, check.cts and
// check.ts, one per module kind a cell compiles). It imports every public package and uses its types, so
// each cell type-checks the installed declarations (`skipLibCheck: false`) under its own settings.
// No top-level await and no import.meta: the same text must compile as CommonJS (check.cts).
import { type Allocation, type AllocatorStats, ArrayBufferSlabProvider, TlsfPool } from '@keel/allocator';
import { createCommandBuffer, RecordingSink } from '@keel/command-buffer';
import { type CpuDeviceOptions, createCpuDevice, type Kernel, type KernelContext } from '@keel/device-cpu';
import { createWebGpuDevice, type WebGpuDevice, type WebGpuDeviceOptions } from '@keel/device-webgpu';
import { ErrorCode, Fence, KeelError, type Semaphore, TimelineSemaphore, waitAll } from '@keel/fence';
import { type BindingTable, type Buffer, BufferUsage, type Device, QueueAffinity, slotRef } from '@keel/hal';
import { type TrainMlpResult, trainMlp } from '@keel/mlp';
import { Scheduler, type SchedulerOptions } from '@keel/scheduler';
import { ensureOnHost, ResidencyManager, Tensor } from '@keel/tensor-residency';
import { type CreateDeviceOptions, createDevice } from 'keel';

const semaphore: Semaphore = new TimelineSemaphore(0);
export const fence: Fence = Fence.join(Fence.of({ semaphore, value: 1 }), Fence.empty);
export const all: Promise<void> = waitAll([fence], { timeoutMs: 10 });
export const error: KeelError = new KeelError(ErrorCode.INVALID_ARGUMENT, 'x');
export const sink: RecordingSink = new RecordingSink();
export const pool: TlsfPool<ArrayBuffer> = new TlsfPool(new ArrayBufferSlabProvider(), { slabSize: 1 << 16 });
export const stats: AllocatorStats | undefined = undefined;
export const allocation: Allocation<ArrayBuffer> | undefined = undefined;
export const cpuOptions: CpuDeviceOptions = { mode: 'sync' };
export const gpuOptions: WebGpuDeviceOptions = { queueCount: 1, requiredFeatures: ['timestamp-query'] };
export const kernel: Kernel = (context: KernelContext) => {
  void context;
};
export const options: CreateDeviceOptions = { kind: 'cpu', mode: 'sync' };

export async function roundTrip(): Promise<Uint8Array> {
  const device: Device = await createDevice(options);
  const buffer: Buffer = device.createBuffer({ usage: BufferUsage.DEFAULT, byteLength: 4 });
  const table: BindingTable = [{ buffer }];
  const cb = createCommandBuffer(device, { mode: 'reusable', bindingCapacity: 1 });
  cb.begin();
  cb.fill(slotRef(0), 7, 1);
  cb.end();
  const done = device.createSemaphore(0);
  device.queueExecute(QueueAffinity.ANY, Fence.empty, Fence.of({ semaphore: done, value: 1 }), [cb], [table]);
  const out = new Uint8Array(4);
  const read = Fence.of({ semaphore: done, value: 2 });
  device.queueRead(QueueAffinity.ANY, Fence.of({ semaphore: done, value: 1 }), read, { buffer }, out);
  await read.wait();
  const manager = new ResidencyManager(device, {});
  const tensor: Tensor<'f32'> = Tensor.zeros('f32', [2, 2]);
  await ensureOnHost([tensor]);
  await manager.dispose();
  const schedulerOptions: SchedulerOptions = {};
  const scheduler = new Scheduler([{ device, queue: 0 }], schedulerOptions);
  void scheduler;
  await device.destroy();
  return out;
}

export async function cpuAndGpu(): Promise<[number, string]> {
  const cpu = await createCpuDevice({ mode: 'task' });
  const gpu: WebGpuDevice = await createWebGpuDevice(gpuOptions);
  const result: TrainMlpResult = await trainMlp({ device: 'cpu', steps: 1 });
  await cpu.destroy();
  await gpu.destroy();
  return [result.losses.length, gpu.info.name];
}
