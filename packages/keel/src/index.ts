// The curated public API of Keel: what a framework built on Keel needs, re-exported from the runtime
// packages that own it, plus createDevice(). Package-internal helpers stay in their packages (import
// those directly if you must). The reference MLP and trainMlp are an application of the runtime: they
// are @keel/mlp (which the CLI uses), not re-exported here.

export {
  type Allocation,
  type AllocatorStats,
  PassthroughPool,
  type Pool,
  QueueAllocator,
  RingPool,
  type SlabProvider,
  TlsfPool,
} from '@keel/allocator';
export { createCommandBuffer, DeferredCommandBuffer, NoopSink, RecordingSink } from '@keel/command-buffer';
export {
  CpuDevice,
  type CpuDeviceMode,
  type CpuDeviceOptions,
  createCpuDevice,
  type Kernel,
  type KernelBinding,
  type KernelContext,
} from '@keel/device-cpu';
export { createWebGpuDevice, WebGpuDevice, type WebGpuDeviceOptions } from '@keel/device-webgpu';
export {
  ErrorCode,
  Fence,
  KeelError,
  type Semaphore,
  SharedTimelineSemaphore,
  TimelineSemaphore,
  type Timepoint,
  waitAll,
  waitAny,
} from '@keel/fence';
export {
  type Binding,
  type BindingTable,
  type Buffer,
  type BufferParams,
  type BufferRef,
  BufferUsage,
  bufferRef,
  type ChromeTrace,
  type CommandBuffer,
  type CommandBufferOptions,
  type CommandSink,
  type ConstantValue,
  constants,
  type Device,
  type DeviceInfo,
  type DeviceLimits,
  type DispatchConfig,
  type Executable,
  type ExecutableSource,
  type ExportDescriptor,
  MemoryType,
  packConstants,
  QueueAffinity,
  slotRef,
  type Trace,
  type TraceEvent,
  type TraceOptions,
} from '@keel/hal';
export { Scheduler, type SchedulerOptions, type SchedulerTarget } from '@keel/scheduler';
export {
  type DType,
  ensureOnHost,
  type ResidencyCounters,
  ResidencyManager,
  type ResidencyManagerOptions,
  Tensor,
} from '@keel/tensor-residency';
export { type CreateDeviceOptions, createDevice, type DeviceKind } from './create-device';
