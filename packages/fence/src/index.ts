export { describeValue } from './describe-value';
export { Fence, type Timepoint } from './fence';
export {
  ErrorCode,
  KeelError,
  type KeelErrorOptions,
  type StructuredCause,
  type StructuredKeelError,
} from './keel-error';
export {
  isSemaphore,
  type ReachedCallback,
  type Registration,
  SEMAPHORE_BRAND,
  type Semaphore,
} from './semaphore';
export type { SemaphoreOptions } from './semaphore-support';
export {
  SHARED_MESSAGE_CAPACITY,
  SHARED_SEMAPHORE_BYTES,
  type SharedSemaphoreHandle,
  SharedTimelineSemaphore,
} from './shared-timeline-semaphore';
export { TimelineSemaphore } from './timeline-semaphore';
export type { WaitOptions, WaitSyncOptions } from './validate';
export { waitAll, waitAny } from './wait';
