/**
 * Options of `trainMlp` (what `keel demo` and the `mlp` benchmark run) and their validation. The
 * workload is the reference MLP of DESIGN.md (784-512-512-10, ReLU, softmax cross-entropy, SGD lr 0.05,
 * batch 256, the synthetic data set); only the device, the number of steps and the batch size vary.
 */
import type { CpuDeviceMode } from '@keel/device-cpu';
import type { WebGpuDeviceOptions } from '@keel/device-webgpu';
import { describeValue, ErrorCode, KeelError } from '@keel/fence';
import { checkOptions, type Device, type OptionRules, type TraceOptions } from '@keel/hal';
import { TRACE_OPTION_RULES } from '@keel/hal/driver';
import { checkGemmTiling, type GemmTiling } from '../webgpu/gemm-tiling';
import type { RecoveryEvent, StepProgress } from './step-progress';

/**
 * Steps trained when `steps` is not given, per device kind: about 10–15 s on the CPU device of a 2-core
 * machine (~17 ms/step); WebGPU gets fewer because on lavapipe (WebGPU on the CPU) a step takes
 * ~270 ms, while on a real GPU a step takes about a millisecond either way.
 */
export const DEFAULT_STEPS: Readonly<Record<TrainDeviceKind, number>> = Object.freeze({
  cpu: 600,
  webgpu: 100,
});
/** Largest batch accepted (the activations of a step must fit a device's queue allocations). */
export const MAX_BATCH = 16384;
/** Largest step count accepted. */
export const MAX_STEPS = 1_000_000;

/** The device kinds `trainMlp` opens itself. */
export type TrainDeviceKind = 'cpu' | 'webgpu';

export interface TrainMlpOptions {
  /**
   * 'cpu' (default: the CPU device in task mode, 2 queues, every core working on queue 0), 'webgpu'
   * (Dawn in Node, navigator.gpu in browsers), or a Keel device the caller opened and keeps owning
   * (backend 'cpu' or 'webgpu', at least 2 queues; it is not destroyed).
   */
  readonly device?: TrainDeviceKind | Device;
  /** Training steps (default DEFAULT_STEPS of the device kind). */
  readonly steps?: number;
  /** Samples per step (default 256, the reference batch). */
  readonly batch?: number;
  /**
   * Steps excluded from `msPerStep` (JIT, pipeline compilation, first-touch of memory). Default:
   * min(10, ⌊steps / 5⌋).
   */
  readonly warmup?: number;
  /**
   * Distinct batches generated up front and cycled through (batch i of the data set for i < n), so
   * that data generation is not timed: the benchmark sets it, as the TensorFlow.js side does. Default:
   * undefined, every step trains on a fresh batch (batch k of the data set) generated on the host while
   * the device runs earlier steps.
   */
  readonly pregeneratedBatches?: number;
  /**
   * true (default): steps k+1 and k+2 (k+1 only, with `checkpointEvery`) are submitted before the host
   * waits for the loss of step k, so the device never idles while the host handles a loss (`stepMs` is
   * then the step throughput). false: the host
   * waits for each step's loss before submitting the next (`stepMs` is then the step latency, as in a
   * loop that awaits every loss, e.g. TensorFlow.js's `await loss.data()`). Uploads overlap either way.
   */
  readonly overlap?: boolean;
  /** CPU device only: 'task' (default) or 'sync'. */
  readonly cpuMode?: CpuDeviceMode;
  /** CPU device only: worker threads of the compute queue (default: every core). */
  readonly workers?: number;
  /**
   * CPU device only: the URL of the built kernel module (default: `kernels/mlp-cpu.js` next to the
   * bundle this code runs from, i.e. `dist/`). Tests running from sources pass the built file.
   */
  readonly cpuKernelUrl?: string | URL;
  /**
   * WebGPU device only: the GEMM tiling of the WGSL kernels (default: `wgslGemmTilingFor(device.info)`,
   * by adapter class; `parseGemmTiling('s32x32x16_4x4')` spells one by name). Checked before the
   * device is opened.
   */
  readonly wgslTiling?: GemmTiling;
  /** WebGPU device only: options of `createWebGpuDevice` (queueCount is set to 2). */
  readonly webgpu?: Omit<WebGpuDeviceOptions, 'queueCount'>;
  /**
   * Called on the host once the loss of each step was read back, in step order. Must not throw; it
   * runs between submissions, so keep it short.
   */
  readonly onStep?: (progress: StepProgress) => void;
  /**
   * Called once the device is open and the step recorded, before the first step is submitted. `device`
   * is the run's device (a test or a demo may destroy it to simulate a loss, see `loseDevice`).
   */
  readonly onStart?: (info: {
    readonly deviceName: string;
    readonly backend: string;
    readonly device: Device;
  }) => void;
  /**
   * Survive a lost device: the parameters are mirrored to host memory every `checkpointEvery` steps
   * (a `MirrorPolicy` of @keel/tensor-residency, off the critical path); when the device is lost the
   * run opens a new one (`reopenDevice`), re-homes the parameters from their last mirror and resumes
   * from that step. Default: undefined, no mirror (a lost device ends the run with its error).
   */
  readonly checkpointEvery?: number;
  /**
   * With `checkpointEvery`: opens the device that replaces a lost one (default: a new device of the
   * lost one's backend, with this run's options; the run owns and destroys it).
   */
  readonly reopenDevice?: (lost: Device) => Device | Promise<Device>;
  /** With `checkpointEvery`: called after each recovery, before training resumes. */
  readonly onRecovery?: (event: RecoveryEvent) => void;
  /**
   * Stops the run: checked before the device is opened, at every step boundary (before each
   * submission) and once more after the last loss arrived (so an abort during the last steps is not
   * lost). Once it is aborted, the run waits for the steps already submitted, destroys what it
   * opened (and releases what it made on a caller's device), and rejects with KeelError CANCELLED
   * (cause = the signal's reason). Default: undefined, the run ends after `steps`.
   */
  readonly abortSignal?: AbortSignal;
  /**
   * Traces the last `traceSteps` steps (1..steps; more is clamped to `steps`): `device.startTrace`
   * right before the first of them is submitted, stopped once the last loss is read back; the result's
   * `trace` holds the Chrome trace event JSON (what `keel demo --trace FILE` writes). Default:
   * undefined, no trace. On a caller's device that already records a trace, the run fails with
   * FAILED_PRECONDITION. A device lost inside the traced steps (`checkpointEvery`) keeps its part and
   * the replacement records the rest: the trace holds both, one pid per device.
   */
  readonly traceSteps?: number;
  /**
   * With `traceSteps`: the trace's options (hal TraceOptions, e.g. `gpuTimestamps: false`), checked
   * with the other options against `startTrace`'s rules (INVALID_ARGUMENT naming `traceOptions`).
   */
  readonly traceOptions?: TraceOptions;
}

/** The options after defaults and validation. */
export interface ResolvedTrainOptions {
  readonly steps: number;
  readonly batch: number;
  readonly warmup: number;
  readonly pregeneratedBatches: number | undefined;
  readonly checkpointEvery: number | undefined;
  /** The first traced step (0-based), or undefined when nothing is traced. */
  readonly traceFrom: number | undefined;
}

function integerIn(value: unknown, what: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new KeelError(
      ErrorCode.INVALID_ARGUMENT,
      `trainMlp: ${what} must be an integer in [${min}, ${max}], got ${describeValue(value)}`,
    );
  }
  return value;
}

/** The Device members a run calls: an object without every one of them is not a Keel Device. */
const DEVICE_METHODS = [
  'createBuffer',
  'createExecutable',
  'createCommandBuffer',
  'queueAlloca',
  'queueDealloca',
  'queueExecute',
  'queueRead',
  'queueWrite',
  'flush',
  'destroy',
] as const;

/**
 * True for an object shaped like a Keel Device (hal's `Device`): an `info` with a backend, a name, a
 * queue count, limits and features, a `lost` promise, and the methods the run calls (`moreMethods`: those
 * another caller needs besides). Checked with the options, so a stand-in is refused as INVALID_ARGUMENT
 * before anything runs on it.
 */
export function isDeviceLike(value: unknown, moreMethods: readonly string[] = []): value is Device {
  if (typeof value !== 'object' || value === null) return false;
  const d = value as Readonly<Record<string, unknown>>;
  const info = d.info as Readonly<Record<string, unknown>> | null | undefined;
  if (typeof info !== 'object' || info === null) return false;
  const lost = d.lost as { readonly then?: unknown } | null | undefined;
  return (
    typeof info.backend === 'string' &&
    typeof info.name === 'string' &&
    Number.isSafeInteger(info.queueCount) &&
    typeof info.limits === 'object' &&
    info.limits !== null &&
    Array.isArray(info.features) &&
    typeof lost === 'object' &&
    lost !== null &&
    typeof lost.then === 'function' &&
    DEVICE_METHODS.every((m) => typeof d[m] === 'function') &&
    moreMethods.every((m) => typeof d[m] === 'function')
  );
}

/** Every option `trainMlp` takes (an unknown key or a wrong type is INVALID_ARGUMENT). */
const TRAIN_OPTION_RULES: OptionRules = {
  device: {
    type: 'custom',
    expected: "'cpu', 'webgpu' or a Keel Device",
    check: (v) => v === 'cpu' || v === 'webgpu' || isDeviceLike(v),
  },
  steps: { type: 'integer', min: 1, max: MAX_STEPS },
  batch: { type: 'integer', min: 1, max: MAX_BATCH },
  warmup: { type: 'integer', min: 0 },
  pregeneratedBatches: { type: 'integer', min: 1, max: 1024 },
  overlap: { type: 'boolean' },
  cpuMode: { type: 'string', oneOf: ['sync', 'task'] },
  workers: { type: 'integer', min: 1, max: 256 },
  cpuKernelUrl: {
    type: 'custom',
    expected: 'a string or a URL',
    check: (v) => typeof v === 'string' || v instanceof URL,
  },
  wgslTiling: { type: 'object' },
  webgpu: { type: 'object' },
  onStep: { type: 'function' },
  onStart: { type: 'function' },
  checkpointEvery: { type: 'integer', min: 1, max: MAX_STEPS },
  reopenDevice: { type: 'function' },
  onRecovery: { type: 'function' },
  traceSteps: { type: 'integer', min: 1, max: MAX_STEPS },
  traceOptions: { type: 'object' },
  abortSignal: {
    type: 'custom',
    expected: 'an AbortSignal',
    check: (v) =>
      typeof v === 'object' &&
      v !== null &&
      typeof (v as Partial<AbortSignal>).aborted === 'boolean' &&
      typeof (v as Partial<AbortSignal>).addEventListener === 'function',
  },
};

/** The KeelError CANCELLED of a run stopped through its `abortSignal`. */
export function trainCancelled(signal: AbortSignal, atStep: number, what = 'trainMlp'): KeelError {
  return new KeelError(
    ErrorCode.CANCELLED,
    `${what}: the run was aborted through its abortSignal ${atStep === 0 ? 'before the first step' : `after step ${atStep}`}`,
    { cause: signal.reason },
  );
}

/**
 * Applies defaults and checks the options (unknown keys and wrong types included). Throws KeelError INVALID_ARGUMENT naming the option
 * and the accepted range.
 */
export function resolveTrainOptions(rawOptions: TrainMlpOptions): ResolvedTrainOptions {
  const options = checkOptions<TrainMlpOptions>('trainMlp', rawOptions, TRAIN_OPTION_RULES);
  const kind = typeof options.device === 'object' ? options.device.info.backend : (options.device ?? 'cpu');
  const defaultSteps = kind === 'webgpu' ? DEFAULT_STEPS.webgpu : DEFAULT_STEPS.cpu;
  const steps = integerIn(options.steps ?? defaultSteps, 'steps', 1, MAX_STEPS);
  const batch = integerIn(options.batch ?? 256, 'batch', 1, MAX_BATCH);
  const warmup = integerIn(options.warmup ?? Math.min(10, Math.floor(steps / 5)), 'warmup', 0, steps - 1);
  const pregeneratedBatches =
    options.pregeneratedBatches === undefined
      ? undefined
      : integerIn(options.pregeneratedBatches, 'pregeneratedBatches', 1, 1024);
  if (options.workers !== undefined) integerIn(options.workers, 'workers', 1, 256);
  if (options.wgslTiling !== undefined) {
    try {
      checkGemmTiling(options.wgslTiling);
    } catch (error) {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `trainMlp: option 'wgslTiling': ${error instanceof Error ? error.message : describeValue(error)}`,
      );
    }
  }
  const checkpointEvery =
    options.checkpointEvery === undefined
      ? undefined
      : integerIn(options.checkpointEvery, 'checkpointEvery', 1, MAX_STEPS);
  // startTrace's own rules, checked now rather than when the trace starts (near the end of the run).
  if (options.traceOptions !== undefined)
    checkOptions<TraceOptions>("trainMlp: option 'traceOptions'", options.traceOptions, TRACE_OPTION_RULES);
  const traceFrom = options.traceSteps === undefined ? undefined : Math.max(0, steps - options.traceSteps);
  return { steps, batch, warmup, pregeneratedBatches, checkpointEvery, traceFrom };
}
