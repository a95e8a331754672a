/** What `trainMlp` returns: the losses, the timing, and the counters of every package it used. */
import type { AllocatorStats } from '@keel/allocator';
import type { ChromeTrace } from '@keel/hal';
import type { ResidencyCounters } from '@keel/tensor-residency';
import type { MlpConfig, MlpParams } from '../model';

/** Bytes moved between host and device, per direction and per kind of data. */
export interface TransferTotals {
  /**
   * Parameters: uploaded by the ResidencyManager (once before the first step, and once onto each
   * device that replaced a lost one).
   */
  readonly weightsToDevice: number;
  /** Parameters: read back by `ensureOnHost` (once, after the last step). */
  readonly weightsToHost: number;
  /** Batches (x and labels), queueWrite on the upload queue, every step (redone steps included). */
  readonly batchesToDevice: number;
  /**
   * Batches uploaded: one per step, plus those of steps redone after a recovery and those uploaded
   * ahead to a device that was then lost (`batchesToDevice / batchUploads` is one batch's bytes).
   */
  readonly batchUploads: number;
  /** The loss, 4 bytes per step, queueRead on the compute queue. */
  readonly lossToHost: number;
  /**
   * With `checkpointEvery`: the parameter mirrors read back to host memory (`checkpoint.mirroredBytes`,
   * on the upload queue, off the critical path); 0 otherwise.
   */
  readonly checkpointsToHost: number;
  /** Sums per direction: every byte the run moved that way, checkpoint mirrors included. */
  readonly hostToDevice: number;
  readonly deviceToHost: number;
}

/** The command buffer's story: recorded once, replayed every step. */
export interface CommandCounts {
  /** Times the step was recorded (begin … end): 1. */
  readonly recordings: number;
  /** Commands in the recording (`commandBuffer.commandCount`: dispatches and barriers). */
  readonly commandsRecorded: number;
  readonly dispatchesPerStep: number;
  readonly barriersPerStep: number;
  /** Submissions of the recorded command buffer (one queueExecute per step, each with its own table). */
  readonly replays: number;
  /** Commands executed over the run: commandsRecorded × replays. */
  readonly commandsReplayed: number;
}

/** Queue-ordered allocations of the step's temporaries (one arena per step). */
export interface TransientMemory {
  /** Bytes of one step's arena (activations, gradients, per-row loss). */
  readonly arenaBytes: number;
  /**
   * The device allocator's statistics for the run (undefined when the device exposes none): counters
   * (allocas, deallocas, reuses, growths, waits, failures, the pool's reserves and releases) count the
   * run's own operations, also on a caller's device used before; live, dying and reserved bytes are
   * the values after the run; the peaks are the device's, see `peaksSince`. After a recovery: the last
   * device's.
   */
  readonly allocator: AllocatorStats | undefined;
  /**
   * What `allocator`'s peaks (`peakLiveBytes`, `peakReservedBytes`) cover: 'run' when the allocator had
   * allocated nothing before the run (a device the run opened, or a fresh one of the caller's), so they
   * are the run's peaks; 'device' on a caller's device used before: the device's peaks since it was
   * created (devices cannot reset them), which may come from that earlier work.
   */
  readonly peaksSince: 'run' | 'device';
}

/** What the mirror did and how the run survived lost devices (`checkpointEvery` runs only). */
export interface CheckpointReport {
  /** The parameters were mirrored to host memory every this many steps. */
  readonly every: number;
  /** Parameter mirrors completed (six per checkpoint), over every device of the run. */
  readonly mirrors: number;
  /** Checkpoints completed (rounds of the six parameters). */
  readonly checkpoints: number;
  /** Bytes the mirrors read back device → host (off the critical path, on the upload queue). */
  readonly mirroredBytes: number;
  /** Due checkpoints deferred one step because the previous one was still in flight. */
  readonly deferred: number;
  /** Devices lost and replaced during the run. */
  readonly recoveries: number;
  /** Reported steps trained again after recoveries (at most `every` per recovery once a mirror landed). */
  readonly stepsRedone: number;
  /**
   * Steps the restored mirror already held whose loss had not reached the host when the device was
   * lost (they ran, but their loss is unknown): their `losses` entries are NaN and `onStep` skipped them.
   */
  readonly stepsUnreported: number;
  /** The step (from 1) each recovery resumed at. */
  readonly resumedAt: readonly number[];
  /**
   * Per recovery (same order as `resumedAt`): true when the parameters came from the last mirror,
   * false when none had landed and the run restarted from the initial parameters.
   */
  readonly resumedFromMirror: readonly boolean[];
}

export interface TrainMlpResult {
  readonly config: MlpConfig;
  /** `device.info.name` and `device.info.backend`. */
  readonly deviceName: string;
  readonly backend: string;
  readonly steps: number;
  readonly warmup: number;
  /** The loss of every step, in order. */
  readonly losses: Float32Array<ArrayBuffer>;
  /**
   * Milliseconds between consecutive loss read-backs, every step: the step throughput when `overlap`
   * (default), the step latency without.
   */
  readonly stepMs: readonly number[];
  /** Median of `stepMs` after the warm-up steps. */
  readonly msPerStep: number;
  /** Wall time from the first submission to the last loss, in ms. */
  readonly trainMs: number;
  /** Wall time of the whole call (device opening, kernel loading, recording, training, read-back). */
  readonly totalMs: number;
  readonly transfers: TransferTotals;
  /** Parameter tensors (weights and biases) kept resident by the ResidencyManager. */
  readonly parameterTensors: number;
  /** The ResidencyManager's counters (the parameters' device copies; summed over re-homed managers). */
  readonly residency: ResidencyCounters;
  readonly commands: CommandCounts;
  readonly transient: TransientMemory;
  /** The trained parameters, read back once at the end. */
  readonly params: MlpParams;
  /** With `checkpointEvery`: the mirror's figures and the recoveries; undefined otherwise. */
  readonly checkpoint: CheckpointReport | undefined;
  /**
   * With `traceSteps`: the device trace (hal Trace, Chrome trace event JSON) of the last `traceSteps`
   * steps, from the submission of the first of them to the read-back of the last loss; undefined
   * otherwise (or when the device cannot trace). When a device was lost inside those steps, every
   * device of the run that trained some of them recorded its part and the parts are merged: one `pid`
   * per device, `otherData.devices` the number of devices, `otherData.processes` (pid → role, e.g.
   * "cpu: from step 4, lost after step 5"); the steps redone on the replacement appear on both.
   */
  readonly trace?: ChromeTrace;
}
