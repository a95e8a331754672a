/**
 * The demo's API: `trainMlp` trains the reference MLP on a Keel device (what `keel demo` runs and the
 * `mlp` benchmark times), and `formatSummary` renders its result.
 */

export { loseDevice, MAX_RECOVERIES } from './device-loss';
export { describeModel, formatBytes, formatSummary } from './format-summary';
export type { RecoveryEvent, StepProgress } from './step-progress';
export { trainMlp } from './train-mlp';
export {
  DEFAULT_STEPS,
  MAX_BATCH,
  MAX_STEPS,
  type TrainDeviceKind,
  type TrainMlpOptions,
} from './train-options';
export type {
  CheckpointReport,
  CommandCounts,
  TrainMlpResult,
  TransferTotals,
  TransientMemory,
} from './train-result';
