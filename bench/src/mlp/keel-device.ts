/**
 * The reference MLP on a Keel device: the step program recorded once into a reusable command buffer (a
 * barrier between stages) over the device's MLP executable, weights resident, and per step: write the
 * batch, execute, read the 4-byte loss back, each fence-ordered on one timeline. This is the device
 * integration the demo does, reduced to what the benchmark measures (no second upload queue, no
 * queue-ordered activations).
 */
import { Fence } from '@keel/fence';
import { type Buffer, BufferUsage, type Device, type ExecutableSource, QueueAffinity } from '@keel/hal';
import { median } from '../harness.ts';
import {
  biasName,
  initParams,
  type MlpConfig,
  REFERENCE_MLP,
  SyntheticDataset,
  trainingStepProgram,
  weightName,
} from './keel-mlp.ts';

export interface KeelDeviceRunOptions {
  readonly config?: MlpConfig;
  readonly steps?: number;
  readonly warmup?: number;
  readonly batches?: number;
}

export interface KeelDeviceRunResult {
  readonly msPerStep: number;
  readonly stepMs: number[];
  readonly losses: number[];
  readonly deviceName: string;
}

/** Trains on `device` (destroyed at the end) with the MLP executable made from `source`. */
export async function runKeelDeviceMlp(
  device: Device,
  source: ExecutableSource,
  options: KeelDeviceRunOptions = {},
): Promise<KeelDeviceRunResult> {
  const config = options.config ?? REFERENCE_MLP;
  const steps = options.steps ?? 10;
  const warmup = options.warmup ?? 3;
  const d = config.layers;
  const data = new SyntheticDataset({ inputSize: d[0]!, classes: d[d.length - 1]!, seed: 0x64617461 });
  const batches = Array.from({ length: options.batches ?? 8 }, (_, i) => data.batch(i, config.batch));
  try {
    const program = trainingStepProgram(config);
    const buffers = new Map<string, Buffer>();
    for (const b of program.buffers) {
      buffers.set(
        b.name,
        device.createBuffer({ byteLength: b.bytes, usage: BufferUsage.DEFAULT, label: b.name }),
      );
    }
    const executable = await device.createExecutable(source);
    const cb = device.createCommandBuffer({ mode: 'reusable', label: 'mlp step' });
    cb.begin();
    program.stages.forEach((stage, s) => {
      if (s > 0) cb.barrier();
      for (const dispatch of stage) {
        cb.dispatch(executable, dispatch.kernel, {
          workload: dispatch.workload,
          constants: dispatch.constants,
          bindings: dispatch.bindings.map((name) => ({ buffer: buffers.get(name)! })),
        });
      }
    });
    cb.end();
    const queue = QueueAffinity.ANY;
    const timeline = device.createSemaphore(0);
    let t = 0;
    const next = (): { wait: Fence; signal: Fence } => {
      const wait = t === 0 ? Fence.empty : Fence.of({ semaphore: timeline, value: t });
      t++;
      return { wait, signal: Fence.of({ semaphore: timeline, value: t }) };
    };
    const init = initParams(config);
    const write = (name: string, bytes: ArrayBufferView): void => {
      const { wait, signal } = next();
      device.queueWrite(queue, wait, signal, bytes, { buffer: buffers.get(name)! });
    };
    for (const [i, w] of init.weights.entries()) write(weightName(i), w);
    for (const [i, b] of init.biases.entries()) write(biasName(i), b);
    const lossOut = new Float32Array(1);
    const losses: number[] = [];
    const times: number[] = [];
    for (let s = 0; s < warmup + steps; s++) {
      const batch = batches[s % batches.length]!;
      const start = performance.now();
      write('x', batch.x);
      write('labels', batch.labels);
      let f = next();
      device.queueExecute(queue, f.wait, f.signal, [cb]);
      f = next();
      device.queueRead(
        queue,
        f.wait,
        f.signal,
        { buffer: buffers.get('loss')! },
        new Uint8Array(lossOut.buffer),
      );
      await f.signal.wait({ timeoutMs: 60_000 });
      losses.push(lossOut[0]!);
      if (s >= warmup) times.push(performance.now() - start);
    }
    return { msPerStep: median(times), stepMs: times, losses, deviceName: device.info.name };
  } finally {
    await device.destroy();
  }
}
