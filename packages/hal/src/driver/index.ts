/**
 * `@keel/hal/driver`: the driver kit for device authors (see the README § Two faces). The queue front
 * (argument checks, lifecycle, the Device queue methods over a narrow enqueue/execute surface), the one
 * pooled operation record, failure propagation and completion helpers, fence helpers, and the builders
 * plan compilers share. Re-exports only.
 */
export { snapshotBindingTable } from '../binding-table';
export { assertBufferLive, checkBufferByteLength, checkBufferParams } from '../buffer';
export { resolveRange } from '../buffer-ref';
export { createExecutableExports, lookupExport } from '../executable';
export {
  abortedBy,
  completeSignal,
  failOperation,
  failTimepoints,
  hasPendingTimepoint,
  propagateFailure,
  signalPendingTimepoints,
  thrownBy,
  type UnhandledFailureContext,
  type UnhandledFailureHook,
  type UnhandledFailureReport,
  unhandledFailureReporter,
} from '../failure';
export { checkOptions, type OptionRule, type OptionRules } from '../options';
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
} from '../queue-arguments';
export { growTypedArray, TypedArrayBuilder, type TypedArrayKind } from './growable';
export { invalid } from './invalid';
export { type DispatchArgs, PlanSink } from './plan-sink';
export { type AllocaRequest, FRONT_METHODS, type FrontMethod, QueueFront } from './queue-front';
export { OP_NAMES, OpKind, QueueRecord } from './queue-record';
export { RECORD_POOL_MAX, RecordPool } from './record-pool';
export { directCode, directIndex, isSlotCode, REF_STRIDE, RefTableBuilder } from './ref-table';
export { RunList } from './run-list';
export {
  type DispatchTiming,
  newTracePid,
  TRACE_OPTION_RULES,
  TRACK_DISPATCH,
  TRACK_QUEUE,
  TRACK_WAIT,
  TRACK_WORKER,
  TRACK_WORKERS_PER_QUEUE,
  TraceRecorder,
  traceNow,
} from './trace-recorder';
export { slotsUsedBy } from './used-slots';
