/**
 * The training-like loop of the tensor-residency suite, under two policies on one device:
 *
 * - keel: @keel/tensor-residency. Weights live on the device; each step writes the batch on the host
 *   (the device copy of the input goes stale and is uploaded once), runs the step, and reads the
 *   output back (the loss); the weights are read back once, after the last step.
 * - naive: what a runtime without residency does (Glow's DeviceManager before the RFC): every tensor
 *   (weights, input, output) is copied to the device before each step and back after it.
 *
 * The step itself is the same queue work in both: the batch is copied into a quarter of the weights
 * (the "update"), and the output is copied from the head of the weights. Both return a checksum of the
 * final weights so the suite can check that the policies computed the same thing.
 */
import { Fence } from '@keel/fence';
import { type Buffer, BufferUsage, type Device, QueueAffinity } from '@keel/hal';
import { movedBytes, ResidencyManager, Tensor } from '@keel/tensor-residency';

export const MiB = 1024 * 1024;
export const KiB = 1024;

export interface LoopShape {
  readonly steps: number;
  readonly weightBytes: number;
  readonly inputBytes: number;
  readonly outputBytes: number;
}

export interface LoopResult {
  readonly ms: number;
  readonly movedBytes: number;
  readonly checksum: number;
  readonly transfersAvoided?: number;
}

const ANY = QueueAffinity.ANY;

function signalOf(device: Device): Fence {
  return Fence.of({ semaphore: device.createSemaphore(0), value: 1 });
}

/** FNV-1a over a sample of bytes (every 61st), enough to tell two runs apart. */
export function checksum(bytes: Uint8Array): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i += 61) {
    h ^= bytes[i] as number;
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Deterministic batches (a few, reused round robin) and initial weights. */
export function makeData(shape: LoopShape): { weights: Float32Array; batches: Float32Array[] } {
  const weights = new Float32Array(shape.weightBytes / 4);
  for (let i = 0; i < weights.length; i++) weights[i] = ((i * 2654435761) >>> 0) / 2 ** 32;
  const batches = Array.from({ length: 4 }, (_, b) => {
    const batch = new Float32Array(shape.inputBytes / 4);
    for (let i = 0; i < batch.length; i++) batch[i] = b + i / batch.length;
    return batch;
  });
  return { weights, batches };
}

/** Enqueues one step's work: batch → weights[slot], weights[0..output) → output. */
function enqueueStep(
  device: Device,
  shape: LoopShape,
  step: number,
  wait: Fence,
  weights: Buffer,
  input: Buffer,
  output: Buffer,
): Fence {
  const slots = Math.floor(shape.weightBytes / shape.inputBytes);
  const updated = signalOf(device);
  device.queueCopy(
    ANY,
    wait,
    updated,
    { buffer: input, offset: 0, length: shape.inputBytes },
    { buffer: weights, offset: (step % slots) * shape.inputBytes, length: shape.inputBytes },
  );
  const produced = signalOf(device);
  device.queueCopy(
    ANY,
    updated,
    produced,
    { buffer: weights, offset: 0, length: shape.outputBytes },
    { buffer: output, offset: 0, length: shape.outputBytes },
  );
  return produced;
}

/** The loop with device residency. */
export async function keelLoop(device: Device, shape: LoopShape): Promise<LoopResult> {
  const { weights: w0, batches } = makeData(shape);
  const manager = new ResidencyManager(device, { label: 'bench', budgetBytes: 64 * MiB });
  const weights = Tensor.fromHost('f32', [shape.weightBytes / 4], w0, { label: 'weights' });
  const input = Tensor.empty('f32', [shape.inputBytes / 4], { label: 'input' });
  const output = Tensor.empty('f32', [shape.outputBytes / 4], { label: 'output' });
  const start = performance.now();
  for (let step = 0; step < shape.steps; step++) {
    input.write(batches[step % batches.length]!);
    const leases = manager.acquireAll([
      { tensor: weights, access: 'readwrite' },
      { tensor: input, access: 'read' },
      { tensor: output, access: 'write' },
    ]);
    const done = enqueueStep(
      device,
      shape,
      step,
      leases.wait,
      leases.buffer(0),
      leases.buffer(1),
      leases.buffer(2),
    );
    leases.release(done);
    await output.toHost(); // the loss, every step
  }
  const final = await weights.toHost();
  const ms = performance.now() - start;
  const counters = manager.counters;
  const sum = checksum(new Uint8Array(final.buffer, final.byteOffset, final.byteLength));
  weights.release();
  input.release();
  output.release();
  await manager.dispose();
  return { ms, movedBytes: movedBytes(counters), checksum: sum, transfersAvoided: counters.transfersAvoided };
}

/** The naive loop: every tensor to the device before each step and back after it. */
export async function naiveLoop(device: Device, shape: LoopShape): Promise<LoopResult> {
  const { weights: w, batches } = makeData(shape);
  const usage = BufferUsage.DEFAULT;
  const wBuf = device.createBuffer({ usage, byteLength: shape.weightBytes, label: 'weights' });
  const xBuf = device.createBuffer({ usage, byteLength: shape.inputBytes, label: 'input' });
  const yBuf = device.createBuffer({ usage, byteLength: shape.outputBytes, label: 'output' });
  const input = new Float32Array(shape.inputBytes / 4);
  const output = new Float32Array(shape.outputBytes / 4);
  let moved = 0;
  const start = performance.now();
  for (let step = 0; step < shape.steps; step++) {
    input.set(batches[step % batches.length]!);
    const up = signalOf(device);
    const upX = signalOf(device);
    const upY = signalOf(device);
    device.queueWrite(ANY, Fence.empty, up, w, { buffer: wBuf });
    device.queueWrite(ANY, Fence.empty, upX, input, { buffer: xBuf });
    device.queueWrite(ANY, Fence.empty, upY, output, { buffer: yBuf });
    const done = enqueueStep(device, shape, step, Fence.join(up, upX, upY), wBuf, xBuf, yBuf);
    const back = [signalOf(device), signalOf(device), signalOf(device)] as const;
    device.queueRead(ANY, done, back[0], { buffer: wBuf }, w);
    device.queueRead(ANY, done, back[1], { buffer: xBuf }, input);
    device.queueRead(ANY, done, back[2], { buffer: yBuf }, output);
    await Fence.join(...back).wait();
    moved += 2 * (shape.weightBytes + shape.inputBytes + shape.outputBytes);
  }
  const ms = performance.now() - start;
  wBuf.destroy();
  xBuf.destroy();
  yBuf.destroy();
  return { ms, movedBytes: moved, checksum: checksum(new Uint8Array(w.buffer)) };
}
