export { createCommandBuffer } from './create-command-buffer';
export { DeferredCommandBuffer } from './deferred-command-buffer';
export { NoopSink } from './noop-sink';
export { RecordingSink, type ResolvedBinding, type ResolvedCommand } from './recording-sink';
export type { SlotRequirement } from './slot-requirements';
