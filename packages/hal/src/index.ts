export {
  describeValue,
  ErrorCode,
  KeelError,
  type KeelErrorOptions,
  type StructuredKeelError,
} from '@keel/fence';
export type { Binding, BindingTable } from './binding-table';
export {
  assertBufferLive,
  type Buffer,
  type BufferParams,
  type BufferPlacement,
  type BufferState,
  checkBufferByteLength,
  checkBufferParams,
  describeBuffer,
} from './buffer';
export {
  type BufferRef,
  bufferRef,
  type DirectBufferRef,
  type IndirectBufferRef,
  isDirectRef,
  isIndirectRef,
  resolveRange,
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
export type { AllocaOptions, Device, DeviceInfo, DeviceLimits } from './device';
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
export {
  abortedBy,
  failOperation,
  failTimepoints,
  hasPendingTimepoint,
  propagateFailure,
  signalPendingTimepoints,
  type UnhandledFailureContext,
  type UnhandledFailureHook,
  type UnhandledFailureReport,
  unhandledFailureReporter,
} from './failure';
export { checkOptions, type OptionRule, type OptionRules } from './options';
export { QueueAffinity } from './queue-affinity';
export {
  type BufferClass,
  type ByteRange,
  checkCopyRanges,
  checkDeallocaBuffer,
  checkExecuteArguments,
  checkFillPattern,
  checkFillRange,
  checkHostLength,
  checkQueueFences,
  checkQueueRef,
  hostBytes,
  isFence,
  madeByCreateBuffer,
} from './queue-arguments';
