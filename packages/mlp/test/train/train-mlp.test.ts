/**
 * The demo's training run (`trainMlp`, what `keel demo` runs) on the CPU device in task mode and on
 * WebGPU: the loss falls, the parameters cross host↔device only at the start and the end, the step is
 * recorded once and replayed every step, and the transient arena is reused on its queue.
 * The CPU kernels come from the built module (`pnpm --filter @keel/mlp build` first; `pnpm test` does).
 * WebGPU is skipped where there is no adapter, except under CI, where that is a failure.
 */
import { createCpuDevice } from '@keel/device-cpu';
import { createWebGpuDevice } from '@keel/device-webgpu';
import { ErrorCode, KeelError } from '@keel/fence';
import { BufferUsage } from '@keel/hal';
import { describe, expect, it } from 'vitest';
import {
  initParams,
  mlpReference,
  REFERENCE_DATASET,
  REFERENCE_MLP,
  SyntheticDataset,
  trainingStepProgram,
} from '../../src/index';
import { planStepLayout } from '../../src/train/step-layout';
import type { StepProgress } from '../../src/train/step-progress';
import { trainMlp } from '../../src/train/train-mlp';
import type { TrainMlpResult } from '../../src/train/train-result';

const CPU_KERNELS = new URL('../../dist/kernels/mlp-cpu.js', import.meta.url);
const program = trainingStepProgram(REFERENCE_MLP);
const paramCount = program.buffers.filter((b) => b.role === 'param').length;
const paramBytes = program.buffers.filter((b) => b.role === 'param').reduce((n, b) => n + b.bytes, 0);
const batchBytes = REFERENCE_MLP.batch * (4 * REFERENCE_MLP.layers[0]! + 4);
const dispatches = program.stages.reduce((n, s) => n + s.length, 0);
const barriers = program.stages.length - 1;

const mean = (xs: ArrayLike<number>): number => Array.from(xs).reduce((a, b) => a + b, 0) / xs.length;

/** The assertions every device shares. */
function expectHonestRun(r: TrainMlpResult, steps: number): void {
  expect(r.steps).toBe(steps);
  expect(r.losses).toHaveLength(steps);
  for (const loss of r.losses) expect(Number.isFinite(loss)).toBe(true);
  // Weights: uploaded once before the first step, read back once after the last, nothing in between.
  expect(r.residency.hostToDeviceBytes).toBe(paramBytes);
  expect(r.residency.deviceToHostBytes).toBe(paramBytes);
  expect(r.residency.transfers).toBe(2 * paramCount); // one upload and one read-back per parameter
  expect(r.residency.evictions).toBe(0);
  expect(r.transfers.weightsToDevice).toBe(paramBytes);
  expect(r.transfers.weightsToHost).toBe(paramBytes);
  // Batches every step (upload queue), the 4-byte loss every step.
  expect(r.transfers.batchesToDevice).toBe(steps * batchBytes);
  expect(r.transfers.lossToHost).toBe(4 * steps);
  expect(r.transfers.hostToDevice).toBe(paramBytes + steps * batchBytes);
  expect(r.transfers.deviceToHost).toBe(paramBytes + 4 * steps);
  // One recording, one replay per step.
  expect(r.commands.recordings).toBe(1);
  expect(r.commands.dispatchesPerStep).toBe(dispatches);
  expect(r.commands.barriersPerStep).toBe(barriers);
  expect(r.commands.commandsRecorded).toBe(dispatches + barriers);
  expect(r.commands.replays).toBe(steps);
  expect(r.commands.commandsReplayed).toBe(steps * (dispatches + barriers));
  // One arena per step from the queue-ordered allocator, reused in place: one live at a time, no growth
  // after the first, nobody waits.
  const a = r.transient.allocator;
  expect(a).toBeDefined();
  expect(a!.allocas).toBe(steps);
  expect(a!.deallocas).toBe(steps);
  expect(a!.liveBytes).toBe(0);
  expect(a!.peakLiveBytes).toBe(r.transient.arenaBytes);
  expect(a!.growths).toBe(1);
  expect(a!.waits).toBe(0);
  expect(a!.reuseDominated + a!.reuseFrontierReached).toBe(steps - 1);
  expect(a!.reuseDominated).toBeGreaterThanOrEqual((steps - 1) / 2);
  // The parameters trained.
  const init = initParams(REFERENCE_MLP);
  for (const [i, w] of r.params.weights.entries()) {
    expect(w).toHaveLength(init.weights[i]!.length);
    expect(w.every(Number.isFinite)).toBe(true);
    expect(w).not.toEqual(init.weights[i]);
  }
  expect(r.msPerStep).toBeGreaterThan(0);
}

describe('trainMlp on the CPU device (task mode)', { timeout: 120_000 }, () => {
  let cpu: TrainMlpResult | undefined;

  it('trains 50 steps: the loss falls, weights stay resident, one recording replayed 50 times', async () => {
    const r = await trainMlp({ device: 'cpu', steps: 50, cpuKernelUrl: CPU_KERNELS });
    cpu = r;
    expect(r.backend).toBe('cpu');
    expect(r.deviceName).toMatch(/task/);
    expectHonestRun(r, 50);
    expect(mean(r.losses.subarray(45))).toBeLessThan(0.5 * r.losses[0]!);
  });

  it("the first step's loss is the reference forward pass on the initial weights and batch 0", () => {
    expect(cpu).toBeDefined();
    const batch = new SyntheticDataset(REFERENCE_DATASET).batch(0, REFERENCE_MLP.batch);
    const fwd = mlpReference.forward(
      REFERENCE_MLP,
      initParams(REFERENCE_MLP),
      batch.x,
      batch.labels,
      Float32Array,
    );
    expect(cpu!.losses[0]).toBeCloseTo(fwd.loss, 3);
  });

  it('reports every step in order through onStep, with the losses it returns', async () => {
    const seen: StepProgress[] = [];
    const r = await trainMlp({
      device: 'cpu',
      steps: 4,
      batch: 32,
      pregeneratedBatches: 2,
      cpuKernelUrl: CPU_KERNELS,
      onStep: (p) => seen.push(p),
    });
    expect(seen.map((p) => p.step)).toEqual([1, 2, 3, 4]);
    expect(seen.map((p) => p.loss)).toEqual(Array.from(r.losses));
    expect(seen.every((p) => p.steps === 4 && p.stepMs >= 0)).toBe(true);
    expect(r.config.batch).toBe(32);
    expect(r.transfers.batchesToDevice).toBe(4 * 32 * (4 * 784 + 4));
  });

  it("trains on a caller's device (sync mode), leaves it open and tidy, and computes the same losses", async () => {
    const device = createCpuDevice({ mode: 'sync', queues: 2 });
    try {
      const r = await trainMlp({ device, steps: 3, cpuKernelUrl: CPU_KERNELS });
      expect(r.deviceName).toMatch(/sync/);
      expect(Array.from(r.losses)).toEqual(Array.from(cpu!.losses.subarray(0, 3)));
      expect(device.heldQueueBytes()).toBe(0);
      expect(device.createBuffer({ byteLength: 16, usage: BufferUsage.DEFAULT }).state).toBe('live');
    } finally {
      await device.destroy();
    }
    const one = createCpuDevice({ mode: 'sync', queues: 1 });
    await expect(trainMlp({ device: one, steps: 1 })).rejects.toThrow(/needs 2 \(compute and upload\)/);
    await one.destroy();
  });

  it('rejects bad options with INVALID_ARGUMENT before opening a device', async () => {
    for (const bad of [{ steps: 0 }, { steps: 1.5 }, { batch: -1 }, { warmup: 7, steps: 5 }]) {
      const error = await trainMlp(bad).catch((e: unknown) => e);
      expect(KeelError.is(error, ErrorCode.INVALID_ARGUMENT), String(error)).toBe(true);
    }
  });
});

describe('step layout', () => {
  it('packs the temporaries into one aligned arena and gives every other buffer its own slot', () => {
    const layout = planStepLayout(program, 16);
    expect(layout.params).toEqual(['w0', 'b0', 'w1', 'b1', 'w2', 'b2']);
    expect(layout.slotCount).toBe(10);
    const temps = program.buffers.filter((b) => b.role === 'temp');
    let end = 0;
    for (const t of temps) {
      const ref = layout.ref(t.name);
      expect(ref.slot).toBe(layout.arenaSlot);
      expect(ref.offset! % 256).toBe(0);
      expect(ref.offset!).toBeGreaterThanOrEqual(end);
      end = ref.offset! + t.bytes;
    }
    expect(layout.arenaBytes).toBeGreaterThanOrEqual(end);
    expect(() => layout.ref('nope')).toThrow(/no buffer 'nope'/);
  });
});

// WebGPU: an adapter (lavapipe here), or a reason to skip.
const gpuSkip = await createWebGpuDevice().then(
  async (device) => {
    await device.destroy();
    return undefined;
  },
  (error: unknown) => String(error instanceof Error ? error.message : error),
);
if (gpuSkip !== undefined && process.env.CI) throw new Error(`WebGPU is required under CI: ${gpuSkip}`);

describe.skipIf(gpuSkip !== undefined)(
  `trainMlp on WebGPU${gpuSkip === undefined ? '' : ` (skipped: ${gpuSkip})`}`,
  { timeout: 180_000 },
  () => {
    it('trains 8 steps like the CPU device does, with the same residency, replay and reuse', async () => {
      const steps = 8;
      const r = await trainMlp({ device: 'webgpu', steps, warmup: 2 });
      expect(r.backend).toBe('webgpu');
      expectHonestRun(r, steps);
      expect(r.losses[steps - 1]!).toBeLessThan(0.5 * r.losses[0]!);
      const cpu = await trainMlp({ device: 'cpu', steps, cpuKernelUrl: CPU_KERNELS });
      for (let k = 0; k < steps; k++) expect(r.losses[k]).toBeCloseTo(cpu.losses[k]!, 2);
    });
  },
);
