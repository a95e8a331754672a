/** What `trainMlp` reports after each step (its `onStep` callback) and after a recovery. */
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

/** What `trainMlp` reports after recovering from a lost device (its `onRecovery` callback). */
export interface RecoveryEvent {
  /** Recoveries so far, this one included (from 1). */
  readonly recovery: number;
  /** The last step whose loss had been reported before the loss (from 1; 0 if none). */
  readonly lostAfterStep: number;
  /** Training resumes with this step (from 1): the step after the last mirror (1 without one). */
  readonly resumeAtStep: number;
  /**
   * Reported steps trained again: lostAfterStep − (resumeAtStep − 1), or 0 when the mirror is ahead of
   * the reported steps (their losses had not reached the host: they are NaN in `losses`).
   */
  readonly stepsRedone: number;
  /** Steps rolled back on the device (reported or still in flight at the loss). */
  readonly stepsRolledBack: number;
  /** True when the parameters came from a mirror; false when no mirror had landed (restart from the initial parameters). */
  readonly fromMirror: boolean;
  /** Why the device was lost. */
  readonly reason: string;
  /** The new device's name. */
  readonly deviceName: string;
}
