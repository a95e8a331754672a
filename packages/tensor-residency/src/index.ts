export {
  movedBytes,
  type ResidencyCounters,
  sumCounters,
} from './counters';
export type { AllocationStrategy } from './device-memory';
export {
  bytesPerElement,
  DTYPES,
  type DType,
  isDType,
  type TypedArrayByDType,
  type TypedArrayFor,
} from './dtype';
export { ensureOnHost } from './ensure-on-host';
export { type HostMappableDevice, type HostMapping, isHostMappable } from './host-mapping';
export { type Access, TensorLease, TensorLeases } from './lease';
export {
  type MirrorOptions,
  MirrorPolicy,
  type MirrorStats,
  type TensorRecovery,
} from './mirror-policy';
export {
  type AcquireRequest,
  DEFAULT_BUDGET_BYTES,
  ResidencyManager,
  type ResidencyManagerOptions,
} from './residency-manager';
export type { Shape } from './shape';
export type { StreamCallback, StreamChunk, StreamOptions } from './stream';
export { type FromHostOptions, type HostData, Tensor, type TensorOptions } from './tensor';
