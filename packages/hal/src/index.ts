export {
  describeValue,
  ErrorCode,
  KeelError,
  type KeelErrorOptions,
  type StructuredKeelError,
} from '@keel/fence';
export type { Binding, BindingTable } from './binding-table';
export {
  type Buffer,
  type BufferParams,
  type BufferPlacement,
  type BufferState,
  describeBuffer,
} from './buffer';
export {
  type BufferRef,
  bufferRef,
  type DirectBufferRef,
  type IndirectBufferRef,
  isDirectRef,
  isIndirectRef,
  slotRef,
} from './buffer-ref';
export { BufferUsage, describeMemoryType, describeUsage, hasAllBits, MemoryType } from './buffer-usage';
export type {
  CommandBuffer,
  CommandBufferMode,
  CommandBufferOptions,
  CommandBufferState,
  DispatchConfig,
  DispatchCount,
} from './command-buffer';
export {
  type CommandBindings,
  type CommandSink,
  type ResolvedBindings,
  type StructureBindings,
  type StructureRef,
  type StructureSink,
  TO_END,
} from './command-sink';
export { type ConstantValue, constants, packConstants } from './constants';
export type { AllocaOptions, Device, DeviceInfo, DeviceLimits, PoolAllocatorStats } from './device';
export {
  ceilDivWorkgroupCount,
  createExecutableExports,
  type Executable,
  type ExecutableExport,
  type ExecutableSource,
  type ExportDescriptor,
  type JsModuleExecutableSource,
  lookupExport,
  type WgslExecutableSource,
  type WorkgroupCount,
  type WorkgroupSize,
} from './executable';
export type { UnhandledFailureContext, UnhandledFailureHook } from './failure';
export { checkOptions, type OptionRule, type OptionRules } from './options';
export { QueueAffinity } from './queue-affinity';
export type { ChromeTrace, Trace, TraceEvent, TraceOptions } from './trace';
