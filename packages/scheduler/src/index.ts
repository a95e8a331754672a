export { type CrossDeviceCopyPlacement, copyAcrossDevices } from './copy-across-devices';
export {
  PLACEMENT_REASONS,
  type PlacementReason,
  type PlacementRecord,
  type SchedulerStats,
  type TargetStats,
} from './placement-record';
export type {
  AllocaOperation,
  BarrierOperation,
  CopyOperation,
  DeallocaOperation,
  ExecuteOperation,
  FillOperation,
  HostCallOperation,
  QueueOperation,
  QueueOperationKind,
  ReadOperation,
  SubmitOptions,
  UpdateOperation,
  WriteOperation,
} from './queue-operation';
export { type NonAllocaOperation, Scheduler, type SchedulerOptions } from './scheduler';
export { describeTarget, MAX_TARGETS, type SchedulerTarget, targetsOf } from './scheduler-target';
