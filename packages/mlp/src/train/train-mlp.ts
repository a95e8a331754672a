/**
 * `trainMlp`: trains the reference MLP on a Keel device, the way a framework on Keel would, using each
 * package for what it is for:
 *
 * - device (`@keel/device-cpu` task mode by default, or `@keel/device-webgpu`): one executable of the
 *   MLP kernels (WebAssembly SIMD or WGSL), two queues (compute and upload);
 * - `@keel/command-buffer` (through `device.createCommandBuffer`): the StepProgram recorded ONCE into a
 *   reusable command buffer whose every buffer is a binding-table slot; each step replays it with a
 *   binding table (resident parameters, this step's input buffers and loss slot, this step's arena);
 * - `@keel/allocator` (through `queueAlloca`/`queueDealloca`): the step's temporaries come from one
 *   queue-ordered allocation per step, released when the step executed; the next step's alloca waits
 *   on that, so the allocator reuses the block on the same queue without waiting or growing;
 * - `@keel/tensor-residency`: the parameters are Tensors leased read-write on the device for the whole
 *   run (a chain of steps): uploaded once before the first step, read back once by `ensureOnHost`
 *   after the last; the counters prove it. With `checkpointEvery` they are leased by every step
 *   instead (one `acquireAll`, released with the step's fence: a "use" for the MirrorPolicy that
 *   mirrors them to host memory every K steps), and a lost device is replaced: the manager re-homes
 *   them onto a new device from their last mirror and the run resumes from that step (device-loss.ts);
 * - `@keel/fence`: every ordering is a fence (see step-pipeline.ts): batch k+1 uploads on queue 1 while
 *   step k runs on queue 0, into double-buffered inputs; the host waits only for the loss.
 *
 * The scheduler (`@keel/scheduler`) is not used: every operation has exactly one right queue here, so
 * placement is explicit.
 *
 * Errors: KeelError INVALID_ARGUMENT for bad options, UNAVAILABLE when WebGPU has no adapter, CANCELLED
 * when `abortSignal` stops the run (checked at every step boundary), and any
 * device error of a step (the run stops at the first failed step and rethrows it; with
 * `checkpointEvery`, a lost device is recovered from instead, up to MAX_RECOVERIES times).
 */

import type { AllocatorStats } from '@keel/allocator';
import { ErrorCode, KeelError } from '@keel/fence';
import { type ChromeTrace, type Device, QueueAffinity } from '@keel/hal';
import {
  type AcquireRequest,
  ensureOnHost,
  type MirrorStats,
  ResidencyManager,
  sumCounters,
  Tensor,
  type TensorLeases,
} from '@keel/tensor-residency';
import { type Batch, REFERENCE_DATASET, SyntheticDataset } from '../dataset';
import { initParams, type MlpConfig, type MlpParams, REFERENCE_MLP } from '../model';
import { biasName, trainingStepProgram, weightName } from '../step-program';
import { MAX_RECOVERIES, reopenDevice, restoreParameters, wasLost } from './device-loss';
import { createMlpExecutable, openTrainingDevice } from './open-device';
import { type RecordedStep, recordStep } from './record-step';
import { planStepLayout, type StepLayout } from './step-layout';
import { COMPUTE_QUEUE, LOSS_SLOTS, StepPipeline, UPLOAD_QUEUE } from './step-pipeline';
import {
  type ActiveTrace,
  finalTracePart,
  lostTracePart,
  mergeTraceParts,
  startTracePart,
  type TracePart,
} from './trace-parts';
import { resolveTrainOptions, type TrainMlpOptions, trainCancelled } from './train-options';
import type { CheckpointReport, TrainMlpResult } from './train-result';
import { allocatorStatsSince, peaksSince, transientAllocatorStats } from './transient-allocator-stats';

/** The median of the numbers that are not NaN (steps whose loss never arrived after a device loss). */
function median(values: readonly number[]): number {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** One device's share of a run: the executable, the recorded step and the step pipeline. */
interface Segment {
  readonly device: Device;
  readonly layout: StepLayout;
  readonly recorded: RecordedStep;
  readonly pipeline: StepPipeline;
  /** The transient allocator's statistics before the run's first operation on the device. */
  readonly allocatorBefore: AllocatorStats | undefined;
}

/** The parameters as Tensors named like the program's buffers, in `names` order. */
function parameterTensors(config: MlpConfig, params: MlpParams, names: readonly string[]): Tensor<'f32'>[] {
  const byName = new Map<string, Tensor<'f32'>>();
  const d = config.layers;
  params.weights.forEach((w, i) => {
    const name = weightName(i);
    byName.set(name, Tensor.fromHost('f32', [d[i]!, d[i + 1]!], w, { label: name }));
  });
  params.biases.forEach((b, i) => {
    const name = biasName(i);
    byName.set(name, Tensor.fromHost('f32', [d[i + 1]!], b, { label: name }));
  });
  return names.map((name) => {
    const t = byName.get(name);
    if (t === undefined)
      throw new RangeError(`trainMlp: the step program names an unknown parameter '${name}'`);
    return t;
  });
}

/**
 * Trains the reference MLP (DESIGN.md: 784-512-512-10, ReLU, softmax cross-entropy, SGD lr 0.05, the
 * synthetic data set; `batch` and `steps` from the options) and returns the losses, the timing and the
 * counters. Opens and destroys its device unless the caller passes one (devices opened to replace a
 * lost one are always the run's).
 */
export async function trainMlp(options: TrainMlpOptions = {}): Promise<TrainMlpResult> {
  const started = performance.now();
  const resolved = resolveTrainOptions(options);
  const { steps, warmup, checkpointEvery, traceFrom } = resolved;
  const signal = options.abortSignal;
  if (signal?.aborted) throw trainCancelled(signal, 0);
  const config: MlpConfig = { ...REFERENCE_MLP, batch: resolved.batch };
  const d = config.layers;
  const program = trainingStepProgram(config);
  const dataset = new SyntheticDataset({
    ...REFERENCE_DATASET,
    inputSize: d[0]!,
    classes: d[d.length - 1]!,
  });
  const pregenerated =
    resolved.pregeneratedBatches === undefined
      ? undefined
      : Array.from({ length: resolved.pregeneratedBatches }, (_, i) => dataset.batch(i, config.batch));
  const batchAt = (k: number): Batch =>
    pregenerated === undefined ? dataset.batch(k, config.batch) : pregenerated[k % pregenerated.length]!;
  const overlap = options.overlap ?? true;
  // Steps queued behind the one whose loss the host awaits: two (the step pipeline's three loss slots)
  // so the device never waits for the host's turnaround; one with checkpoints, so that a lost device
  // leaves at most two steps whose loss never arrived (their recovery reports them).
  const lag = !overlap ? 0 : options.checkpointEvery === undefined ? LOSS_SLOTS - 1 : 1;

  const opened = await openTrainingDevice(options);
  const ownedDevices: Device[] = opened.owned ? [opened.device] : [];
  const managers: ResidencyManager[] = [];
  const segments: Segment[] = [];
  let tensors: Tensor<'f32'>[] = [];
  /** Without checkpoints: the parameters' leases for the whole run (released after the last step). */
  let runLeases: TensorLeases | undefined;
  /**
   * With `traceSteps`: the trace of the last steps recording on the current device (started before
   * the first of them is submitted); the parts recorded by lost devices are in `traceParts`.
   */
  let trace: ActiveTrace | undefined;
  const traceParts: TracePart[] = [];
  const openSegment = async (device: Device): Promise<Segment> => {
    const allocatorBefore = transientAllocatorStats(device);
    const executable = await createMlpExecutable(
      'trainMlp',
      device,
      options.cpuKernelUrl,
      options.wgslTiling,
    );
    const layout = planStepLayout(program, device.info.limits.minStorageBufferOffsetAlignment);
    const recorded = recordStep(device, executable, program, layout, COMPUTE_QUEUE);
    const segment = {
      device,
      layout,
      recorded,
      pipeline: new StepPipeline(device, layout, recorded.commandBuffer),
      allocatorBefore,
    };
    segments.push(segment);
    return segment;
  };
  try {
    let segment = await openSegment(opened.device);
    let manager = new ResidencyManager(opened.device, {
      affinity: UPLOAD_QUEUE,
      // Parameters live as long as the run: dedicated buffers, so the queue allocator's statistics
      // show the step's transients alone.
      allocation: 'buffers',
      label: 'mlp parameters',
    });
    managers.push(manager);
    // Checkpoints: a mirror of the six parameters every K steps (one round per step's acquireAll).
    if (checkpointEvery !== undefined) manager.mirror({ everyUses: checkpointEvery });
    const initial = initParams(config);
    tensors = parameterTensors(config, initial, segment.layout.params);
    const initialData = tensors.map((t) => {
      const name = t.label!;
      const i = Number(name.slice(1));
      return (name.startsWith('w') ? initial.weights[i] : initial.biases[i])!.slice();
    });
    const requests: AcquireRequest[] = tensors.map((tensor) => ({ tensor, access: 'readwrite' }));
    if (checkpointEvery === undefined) runLeases = manager.acquireAll(requests);
    options.onStart?.({
      deviceName: opened.device.info.name,
      backend: opened.device.info.backend,
      device: opened.device,
    });

    const losses = new Float32Array(steps);
    const stepMs = new Array<number>(steps).fill(0);
    const t0 = performance.now();
    let last = t0;
    /** Steps whose parameter writes were released on the current device, counted from step 0. */
    let released = 0;
    /** Steps whose loss was reported (the highest reported step, from 1). */
    let reported = 0;
    const resumedAt: number[] = [];
    const resumedFromMirror: boolean[] = [];
    let stepsRedone = 0;
    let stepsUnreported = 0;
    // Trains steps `from` .. steps-1 on `segment`'s device.
    const runFrom = async (from: number, seg: Segment): Promise<void> => {
      const p = seg.pipeline;
      const n = steps - from;
      const report = async (j: number): Promise<void> => {
        const loss = await p.loss(j);
        const now = performance.now();
        const k = from + j;
        losses[k] = loss;
        stepMs[k] = now - last;
        last = now;
        reported = k + 1;
        options.onStep?.({ step: k + 1, steps, loss, stepMs: stepMs[k]!, elapsedMs: now - t0 });
      };
      p.uploadBatch(0, batchAt(from));
      if (n > 1) p.uploadBatch(1, batchAt(from + 1));
      for (let j = 0; j < n; j++) {
        if (signal?.aborted) {
          // A clean stop at a step boundary: the submitted steps finish before anything is destroyed.
          await p.drain().catch(() => {});
          throw trainCancelled(signal, reported);
        }
        // The trace starts at the first traced step, or where a replacement device resumes inside them.
        if (traceFrom !== undefined && from + j >= traceFrom && trace === undefined)
          trace = startTracePart(seg.device, options.traceOptions, from + j + 1);
        if (runLeases !== undefined) {
          p.submitStep(j, runLeases);
        } else {
          // A lease per step: each release is one use of the parameters for the mirror policy.
          const leases = manager.acquireAll(requests);
          try {
            p.submitStep(j, leases);
          } catch (error) {
            leases.cancel();
            throw error;
          }
          leases.release(p.executed(j + 1));
        }
        released = from + j + 1;
        if (j + 2 < n) p.uploadBatch(j + 2, batchAt(from + j + 2));
        seg.device.flush(QueueAffinity.ANY);
        // Overlapped: `lag` steps stay queued behind the one the host waits for, so the device never
        // idles while the host handles a loss.
        if (j >= lag) await report(j - lag);
      }
      for (let j = Math.max(0, n - lag); j < n; j++) await report(j);
    };

    let from = 0;
    for (;;) {
      try {
        await runFrom(from, segment);
        break;
      } catch (error) {
        const lostDevice = segment.device;
        if (checkpointEvery === undefined || resumedAt.length >= MAX_RECOVERIES || signal?.aborted)
          throw error;
        if (!(await wasLost(lostDevice, error))) throw error;
        // The lost device's part of the trace; the replacement records the rest.
        if (trace !== undefined) {
          traceParts.push(lostTracePart(trace, reported));
          trace = undefined;
        }
        // The device is gone: drop what lived there, open a new one, re-home the parameters from
        // their last mirror and resume at the step that mirror holds.
        try {
          segment.pipeline.destroy();
        } catch {
          // Its buffers went with the device.
        }
        if (ownedDevices.includes(lostDevice)) await lostDevice.destroy().catch(() => {});
        const device = await reopenDevice(lostDevice, options);
        ownedDevices.push(device);
        manager = manager.rehome(device);
        managers.push(manager);
        const restored = restoreParameters(tensors, initialData, released);
        segment = await openSegment(device);
        const redone = Math.max(0, reported - restored.step);
        stepsRedone += redone;
        // Steps the mirror holds whose loss never reached the host before the loss: unknown.
        for (let k = reported; k < restored.step; k++) {
          losses[k] = Number.NaN;
          stepMs[k] = Number.NaN;
        }
        stepsUnreported += Math.max(0, restored.step - reported);
        resumedAt.push(restored.step + 1);
        resumedFromMirror.push(restored.fromMirror);
        options.onRecovery?.({
          recovery: resumedAt.length,
          lostAfterStep: reported,
          resumeAtStep: restored.step + 1,
          stepsRedone: redone,
          stepsRolledBack: restored.rolledBack,
          fromMirror: restored.fromMirror,
          reason: KeelError.is(error) && KeelError.is(error.cause) ? error.cause.message : String(error),
          deviceName: device.info.name,
        });
        from = restored.step;
        released = from;
        reported = from;
      }
    }
    const trainMs = last - t0;
    // An abort that came after the last submission (while the last losses were read) is honoured too.
    if (signal?.aborted) throw trainCancelled(signal, reported);
    trace?.trace.stop();

    runLeases?.release(segment.pipeline.executed(segment.pipeline.submitted));
    const trained = await ensureOnHost(tensors);
    await segment.pipeline.drain();
    if (trace !== undefined) traceParts.push(await finalTracePart(trace, steps));
    const chromeTrace: ChromeTrace | undefined = mergeTraceParts(traceParts);
    const byName = new Map(segment.layout.params.map((name, i) => [name, trained[i]!.slice()]));
    const params: MlpParams = {
      weights: config.layers.slice(1).map((_, i) => byName.get(weightName(i))!),
      biases: config.layers.slice(1).map((_, i) => byName.get(biasName(i))!),
    };
    // Transfers add up over the re-homed managers; the memory figures are per device (the last one's
    // now, the highest peak).
    const residency = {
      ...sumCounters(...managers.map((m) => m.counters)),
      residentBytes: manager.counters.residentBytes,
      peakResidentBytes: Math.max(...managers.map((m) => m.counters.peakResidentBytes)),
      budgetBytes: manager.budgetBytes,
    };
    const commandsRecorded = segment.recorded.commandBuffer.commandCount;
    const replays = segments.reduce((n, s) => n + s.pipeline.submitted, 0);
    const batchesToDevice = segments.reduce((n, s) => n + s.pipeline.uploadedBytes, 0);
    const lossToHost = segments.reduce((n, s) => n + s.pipeline.readBytes, 0);
    const batchUploads = segments.reduce((n, s) => n + s.pipeline.uploads, 0);
    const checkpoint =
      checkpointEvery === undefined
        ? undefined
        : checkpointReport(
            checkpointEvery,
            managers,
            resumedAt,
            resumedFromMirror,
            stepsRedone,
            stepsUnreported,
          );
    const checkpointsToHost = checkpoint?.mirroredBytes ?? 0;
    const device = segment.device;
    return {
      config,
      deviceName: device.info.name,
      backend: device.info.backend,
      steps,
      warmup,
      losses,
      stepMs,
      msPerStep: median(stepMs.slice(warmup)),
      trainMs,
      totalMs: performance.now() - started,
      transfers: {
        weightsToDevice: residency.hostToDeviceBytes,
        weightsToHost: residency.deviceToHostBytes,
        batchesToDevice,
        batchUploads,
        lossToHost,
        checkpointsToHost,
        hostToDevice: residency.hostToDeviceBytes + batchesToDevice,
        deviceToHost: residency.deviceToHostBytes + lossToHost + checkpointsToHost,
      },
      parameterTensors: tensors.length,
      residency,
      commands: {
        recordings: segments.length,
        commandsRecorded,
        dispatchesPerStep: segment.recorded.dispatches,
        barriersPerStep: segment.recorded.barriers,
        replays,
        commandsReplayed: commandsRecorded * replays,
      },
      transient: {
        arenaBytes: segment.layout.arenaBytes,
        allocator: allocatorStatsSince(segment.allocatorBefore, transientAllocatorStats(device)),
        peaksSince: peaksSince(segment.allocatorBefore),
      },
      params,
      checkpoint,
      ...(chromeTrace === undefined ? {} : { trace: chromeTrace }),
    };
  } catch (error) {
    // Surface the root cause of an aborted chain (a failed step fails everything after it).
    throw KeelError.is(error, ErrorCode.ABORTED) && KeelError.is(error.cause) ? error.cause : error;
  } finally {
    trace?.trace.stop();
    await cleanUp(ownedDevices, managers.at(-1), runLeases, segments.at(-1), tensors);
  }
}

function checkpointReport(
  every: number,
  managers: readonly ResidencyManager[],
  resumedAt: readonly number[],
  resumedFromMirror: readonly boolean[],
  stepsRedone: number,
  stepsUnreported: number,
): CheckpointReport {
  const stats = managers.map((m) => m.mirrorPolicy?.stats).filter((s): s is MirrorStats => s !== undefined);
  const sum = (key: keyof MirrorStats): number => stats.reduce((n, s) => n + s[key], 0);
  return {
    every,
    mirrors: sum('mirrors'),
    checkpoints: sum('rounds'),
    mirroredBytes: sum('mirroredBytes'),
    deferred: sum('skipped'),
    recoveries: resumedAt.length,
    stepsRedone,
    stepsUnreported,
    resumedAt,
    resumedFromMirror,
  };
}

/**
 * Releases what the run made on a device the caller keeps; destroys every device the run opened.
 * Never throws.
 */
async function cleanUp(
  ownedDevices: readonly Device[],
  manager: ResidencyManager | undefined,
  runLeases: TensorLeases | undefined,
  segment: Segment | undefined,
  tensors: readonly Tensor[],
): Promise<void> {
  if (segment !== undefined && !ownedDevices.includes(segment.device)) {
    try {
      if (runLeases?.leases.some((l) => !l.released)) {
        const submitted = segment.pipeline.submitted;
        if (submitted === 0) runLeases.cancel();
        else runLeases.release(segment.pipeline.executed(submitted));
      }
      await segment.pipeline.drain().catch(() => {});
      segment.pipeline.destroy();
      for (const t of tensors) if (!t.released) t.release();
      await manager?.dispose();
    } catch {
      // Best effort on a device the caller keeps: a failed run leaves failed fences behind.
    }
  }
  for (const device of ownedDevices) await device.destroy().catch(() => {});
}
