/** What `trainMlp` reports after each step (its `onStep` callback). */
export interface StepProgress {
  /** The step whose loss was just read back, from 1. */
  readonly step: number;
  /** Total steps of the run. */
  readonly steps: number;
  /** The mean loss of that step's batch (before the step's update). */
  readonly loss: number;
  /** Milliseconds since the previous step's loss arrived (since the first submission for step 1). */
  readonly stepMs: number;
  /** Milliseconds since the first submission. */
  readonly elapsedMs: number;
}
