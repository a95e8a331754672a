export {
  CtsAssertionError,
  causedBy,
  check,
  checkArrayEqual,
  checkEqual,
  expectKeelError,
  expectRejection,
} from './assertions';
export type { CaseExtras, CtsCase, CtsTag } from './case';
export { CTS_CASES } from './cases/all';
export {
  Binder,
  type CreateCtsDevice,
  CTS_BINDING_CAPACITY,
  CtsContext,
  type CtsDeviceHandle,
  type CtsDeviceOptions,
  delay,
  f32Bits,
  type RefMode,
} from './context';
export { type ConformanceOptions, defineDeviceConformance } from './define-device-conformance';
export {
  CTS_KERNEL_EXPORTS,
  CTS_WORKGROUP_SIZE,
  type CtsKernelName,
  type CtsKernelSources,
  WORKGROUP_ID_MARKER,
} from './kernels';
export { type CaseOutcome, runConformanceCases } from './run-cases';
export { chromeTraceProblems, type ParsedTraceEvent, traceEventsOf } from './trace-schema';
