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
 *   after the last; the counters prove it;
 * - `@keel/fence`: every ordering is a fence (see step-pipeline.ts): batch k+1 uploads on queue 1 while
 *   step k runs on queue 0, into double-buffered inputs; the host waits only for the loss.
 *
 * The scheduler (`@keel/scheduler`) is not used: every operation has exactly one right queue here, so
 * placement is explicit.
 *
 * Errors: KeelError INVALID_ARGUMENT for bad options, UNAVAILABLE when WebGPU has no adapter, and any
 * device error of a step (the run stops at the first failed step and rethrows it).
 */
import { ErrorCode, KeelError } from '@keel/fence';
import { QueueAffinity } from '@keel/hal';
import { ensureOnHost, ResidencyManager, Tensor, type TensorLeases } from '@keel/tensor-residency';
import {
  type Batch,
  biasName,
  initParams,
  type MlpConfig,
  type MlpParams,
  REFERENCE_DATASET,
  REFERENCE_MLP,
  SyntheticDataset,
  trainingStepProgram,
  weightName,
} from '../mlp/index';
import { mlpExecutableSource, openTrainingDevice } from './open-device';
import { recordStep } from './record-step';
import { planStepLayout } from './step-layout';
import { COMPUTE_QUEUE, StepPipeline, UPLOAD_QUEUE } from './step-pipeline';
import { resolveTrainOptions, type TrainMlpOptions } from './train-options';
import type { TrainMlpResult } from './train-result';
import { transientAllocatorStats } from './transient-allocator-stats';

function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
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
 * counters. Opens and destroys its device unless the caller passes one.
 */
export async function trainMlp(options: TrainMlpOptions = {}): Promise<TrainMlpResult> {
  const started = performance.now();
  const resolved = resolveTrainOptions(options);
  const { steps, warmup } = resolved;
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

  const { device, owned } = await openTrainingDevice(options);
  let manager: ResidencyManager | undefined;
  let leases: TensorLeases | undefined;
  let pipeline: StepPipeline | undefined;
  let tensors: Tensor<'f32'>[] = [];
  try {
    const executable = await device.createExecutable(
      mlpExecutableSource(device, options.cpuKernelUrl, options.wgslTiling),
    );
    const layout = planStepLayout(program, device.info.limits.minStorageBufferOffsetAlignment);
    const recorded = recordStep(device, executable, program, layout, COMPUTE_QUEUE);

    manager = new ResidencyManager(device, {
      affinity: UPLOAD_QUEUE,
      // Parameters live as long as the run: dedicated buffers, so the queue allocator's statistics
      // show the step's transients alone.
      allocation: 'buffers',
      label: 'mlp parameters',
    });
    tensors = parameterTensors(config, initParams(config), layout.params);
    leases = manager.acquireAll(tensors.map((tensor) => ({ tensor, access: 'readwrite' as const })));
    pipeline = new StepPipeline(
      device,
      layout,
      recorded.commandBuffer,
      leases.leases.map((lease) => lease.ref),
      leases.wait,
    );
    options.onStart?.({ deviceName: device.info.name, backend: device.info.backend });

    const losses = new Float32Array(steps);
    const stepMs = new Array<number>(steps).fill(0);
    const t0 = performance.now();
    let last = t0;
    const p = pipeline;
    const report = async (k: number): Promise<void> => {
      const loss = await p.loss(k);
      const now = performance.now();
      losses[k] = loss;
      stepMs[k] = now - last;
      last = now;
      options.onStep?.({ step: k + 1, steps, loss, stepMs: stepMs[k]!, elapsedMs: now - t0 });
    };
    p.uploadBatch(0, batchAt(0));
    if (steps > 1) p.uploadBatch(1, batchAt(1));
    const overlap = options.overlap ?? true;
    for (let k = 0; k < steps; k++) {
      p.submitStep(k);
      if (k + 2 < steps) p.uploadBatch(k + 2, batchAt(k + 2));
      device.flush(QueueAffinity.ANY);
      // Overlapped: one step stays queued behind the one the host waits for, so the device never idles
      // while the host handles a loss.
      if (!overlap) await report(k);
      else if (k >= 1) await report(k - 1);
    }
    if (overlap) await report(steps - 1);
    const trainMs = last - t0;

    leases.release(p.executed(steps));
    const trained = await ensureOnHost(tensors);
    await p.drain();
    const byName = new Map(layout.params.map((name, i) => [name, trained[i]!.slice()]));
    const params: MlpParams = {
      weights: config.layers.slice(1).map((_, i) => byName.get(weightName(i))!),
      biases: config.layers.slice(1).map((_, i) => byName.get(biasName(i))!),
    };
    const residency = manager.counters;
    const commandsRecorded = recorded.commandBuffer.commandCount;
    const batchesToDevice = p.uploadedBytes;
    const lossToHost = p.readBytes;
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
        lossToHost,
        hostToDevice: residency.hostToDeviceBytes + batchesToDevice,
        deviceToHost: residency.deviceToHostBytes + lossToHost,
      },
      parameterTensors: tensors.length,
      residency,
      commands: {
        recordings: 1,
        commandsRecorded,
        dispatchesPerStep: recorded.dispatches,
        barriersPerStep: recorded.barriers,
        replays: p.submitted,
        commandsReplayed: commandsRecorded * p.submitted,
      },
      transient: { arenaBytes: layout.arenaBytes, allocator: transientAllocatorStats(device) },
      params,
    };
  } catch (error) {
    // Surface the root cause of an aborted chain (a failed step fails everything after it).
    throw KeelError.is(error, ErrorCode.ABORTED) && KeelError.is(error.cause) ? error.cause : error;
  } finally {
    await cleanUp(owned, device, manager, leases, pipeline, tensors);
  }
}

/** Releases what the run made; destroys the device when the run opened it. Never throws. */
async function cleanUp(
  owned: boolean,
  device: { destroy(): Promise<void> },
  manager: ResidencyManager | undefined,
  leases: TensorLeases | undefined,
  pipeline: StepPipeline | undefined,
  tensors: readonly Tensor[],
): Promise<void> {
  if (owned) {
    await device.destroy();
    return;
  }
  try {
    if (leases?.leases.some((l) => !l.released)) {
      const submitted = pipeline?.submitted ?? 0;
      if (pipeline === undefined || submitted === 0) leases.cancel();
      else leases.release(pipeline.executed(submitted));
    }
    await pipeline?.drain().catch(() => {});
    pipeline?.destroy();
    for (const t of tensors) if (!t.released) t.release();
    await manager?.dispose();
  } catch {
    // Best effort on a device the caller keeps: a failed run leaves failed fences behind.
  }
}
