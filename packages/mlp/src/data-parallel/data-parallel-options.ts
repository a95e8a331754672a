/**
 * Options and result of `trainMlpDataParallel` (data-parallel training of the reference MLP over
 * several devices through @keel/scheduler), and their validation.
 */
import { describeValue, ErrorCode, KeelError } from '@keel/fence';
import { checkOptions, type Device, type OptionRules } from '@keel/hal';
import type { PlacementRecord, SchedulerStats } from '@keel/scheduler';
import type { MlpConfig, MlpParams } from '../model';
import type { StepProgress } from '../train/step-progress';
import { MAX_BATCH, MAX_STEPS } from '../train/train-options';
import type { BalanceMode } from './shard-balancer';

export interface TrainDataParallelOptions {
  /**
   * The devices: a device list (`'cpu:2'`, `'cpu,webgpu'`, `'webgpu:0,webgpu:1'`, `'webgpu:0x2'`; see
   * device-list.ts), opened and destroyed by the run, or Keel devices the caller opened and keeps
   * (backend 'cpu' or 'webgpu', at least 2 queues each, distinct, not lost or destroyed; checked
   * before anything opens, see device-list.ts).
   */
  readonly devices: string | readonly Device[];
  /** Training steps (default 100). */
  readonly steps?: number;
  /** The GLOBAL batch, split into one shard per device (default 256). */
  readonly batch?: number;
  /** Steps excluded from `msPerStep` (default min(10, ⌊steps / 5⌋)). */
  readonly warmup?: number;
  /** As trainMlp's: distinct global batches generated up front and cycled through. */
  readonly pregeneratedBatches?: number;
  /**
   * 'even' (default when every device has the same backend and name): equal shards for the whole run,
   * so the result is reproducible bit for bit. 'measured' (default otherwise): shards proportional to
   * each device's measured speed, re-balanced every `rebalanceEvery` steps.
   */
  readonly balance?: BalanceMode;
  /** With 'measured': steps between re-balances (default 5). */
  readonly rebalanceEvery?: number;
  /** With 'measured': shards are multiples of this many rows (default 8). */
  readonly granule?: number;
  /** CPU devices the run opens: worker threads per queue (default: the cores shared among them). */
  readonly workers?: number;
  /** As trainMlp's: the URL of the built CPU kernel module. */
  readonly cpuKernelUrl?: string | URL;
  /** Placement records kept (the scheduler's trace capacity; default 256). */
  readonly traceCapacity?: number;
  /** Called once each step's global loss is on the host, in step order. */
  readonly onStep?: (progress: StepProgress) => void;
  /** Called once the devices are open and the replicas resident, before the first step. */
  readonly onStart?: (info: {
    readonly devices: readonly { readonly label: string; readonly name: string }[];
  }) => void;
  /**
   * Stops the run at a step boundary, or after the last step when it comes during the last loss
   * (KeelError CANCELLED, as trainMlp).
   */
  readonly abortSignal?: AbortSignal;
}

/** One device's part of a data-parallel run. */
export interface DataParallelDeviceReport {
  /** `cpu:0`, `webgpu:0`, ... (the device list's names; `device{i}` for caller devices). */
  readonly label: string;
  readonly name: string;
  readonly backend: string;
  /** True when its gradients reach the host through pinned (host-mapped) memory: no read, no copy. */
  readonly pinned: boolean;
  /** Rows of the global batch it trained on in the last step. */
  readonly rows: number;
  /**
   * Measured compute speed with `balance: 'measured'`, rows per millisecond (moving average over the
   * steps on the current shards; 0 if never measured): from host calls on the device at its inputs
   * being ready and its gradients computed (step-timer.ts).
   */
  readonly rowsPerMs: number;
  /** Gradient-step recordings (one per shard size it ran). */
  readonly recordings: number;
  /** Dispatches per step. */
  readonly dispatchesPerStep: number;
}

/** Bytes moved by a data-parallel run. */
export interface DataParallelTransfers {
  /** Gradients (and the shard loss) copied to host memory: one read per device per step. */
  readonly gradientsToHost: number;
  /** Gradients read in place from pinned memory (devices with host mapping): crossed, not copied. */
  readonly gradientsPinned: number;
  /** Updated weights written to the replicas: one write per device per step. */
  readonly weightsToDevice: number;
  /** Shards of the batches uploaded. */
  readonly batchesToDevice: number;
  /** The replicas' first upload (through the residency managers). */
  readonly initialWeightsToDevice: number;
  /** The replicas read back after the last step (through the residency managers). */
  readonly finalWeightsToHost: number;
  /** Bytes crossing between the devices and the host per step for the reduction (gradients + weights; pinned included). */
  readonly reductionBytesPerStep: number;
  /** The least any all-reduce through the host moves: each device's gradient bytes out and back in. */
  readonly minimumBytesPerStep: number;
  /** One device's parameter gradient bytes (the model's parameters × 4). */
  readonly gradientBytesPerDevice: number;
}

export interface TrainDataParallelResult {
  readonly config: MlpConfig;
  readonly steps: number;
  readonly warmup: number;
  /** Global loss per step: Σ_d (rows_d / batch) · loss_d (the mean over the global batch). */
  readonly losses: Float32Array;
  readonly stepMs: number[];
  readonly msPerStep: number;
  readonly trainMs: number;
  readonly totalMs: number;
  readonly balance: BalanceMode;
  /** Shard changes applied during the run: always `shards.length - 1`. */
  readonly rebalances: number;
  /**
   * Shard sizes whenever they changed: `{ step, rows }` (step is 0-based: the first step that ran them;
   * the first entry is step 0).
   */
  readonly shards: readonly { readonly step: number; readonly rows: readonly number[] }[];
  readonly devices: readonly DataParallelDeviceReport[];
  readonly transfers: DataParallelTransfers;
  /** True when every replica holds exactly the same bytes after the run (the data-parallel invariant). */
  readonly replicasIdentical: boolean;
  /** The trained parameters (replica 0's, read back through its residency manager). */
  readonly params: MlpParams;
  /** The scheduler's view: target labels (bit order), counters and the latest placement records. */
  readonly placement: {
    readonly targets: readonly string[];
    readonly stats: SchedulerStats;
    readonly trace: readonly PlacementRecord[];
    /** Operations the run submits per step (the trace's last that many records are the last step). */
    readonly operationsPerStep: number;
  };
}

const RULES: OptionRules = {
  devices: {
    type: 'custom',
    expected: 'a device list string or an array of Keel devices',
    check: (v) => typeof v === 'string' || Array.isArray(v),
  },
  steps: { type: 'integer', min: 1, max: MAX_STEPS },
  batch: { type: 'integer', min: 1, max: MAX_BATCH },
  warmup: { type: 'integer', min: 0 },
  pregeneratedBatches: { type: 'integer', min: 1, max: 1024 },
  balance: { type: 'string', oneOf: ['even', 'measured'] },
  rebalanceEvery: { type: 'integer', min: 1, max: MAX_STEPS },
  granule: { type: 'integer', min: 1, max: MAX_BATCH },
  workers: { type: 'integer', min: 1, max: 256 },
  cpuKernelUrl: {
    type: 'custom',
    expected: 'a string or a URL',
    check: (v) => typeof v === 'string' || v instanceof URL,
  },
  traceCapacity: { type: 'integer', min: 1, max: 1 << 20 },
  onStep: { type: 'function' },
  onStart: { type: 'function' },
  abortSignal: {
    type: 'custom',
    expected: 'an AbortSignal',
    check: (v) =>
      typeof v === 'object' && v !== null && typeof (v as Partial<AbortSignal>).aborted === 'boolean',
  },
};

export interface ResolvedDataParallelOptions {
  readonly steps: number;
  readonly batch: number;
  readonly warmup: number;
}

/** Validates the options (INVALID_ARGUMENT naming the option and rule) and applies the defaults. */
export function resolveDataParallelOptions(raw: TrainDataParallelOptions): ResolvedDataParallelOptions {
  const options = checkOptions<TrainDataParallelOptions>('trainMlpDataParallel', raw, RULES);
  if (options.devices === undefined) {
    throw new KeelError(
      ErrorCode.INVALID_ARGUMENT,
      `trainMlpDataParallel: devices is required (a device list such as 'cpu:2', or Keel devices), got ${describeValue(options.devices)}`,
    );
  }
  const steps = options.steps ?? 100;
  const batch = options.batch ?? 256;
  const warmup = options.warmup ?? Math.min(10, Math.floor(steps / 5));
  if (warmup >= steps) {
    throw new KeelError(
      ErrorCode.INVALID_ARGUMENT,
      `trainMlpDataParallel: warmup must be below steps (${steps}), got ${warmup}`,
    );
  }
  return { steps, batch, warmup };
}
