/**
 * Data-parallel training (`trainMlpDataParallel`, what `keel demo --devices` runs): with the same global
 * batches, N replicas give the loss curve of one device within floating-point reduction order
 * (`cpu:2` vs `cpu`, both vs `trainMlp`; `cpu,webgpu` vs `cpu` on the WebGPU adapter, lavapipe here),
 * the replicas end identical, only gradients and weights cross devices, and the scheduler places the
 * work by producers and joins. CPU kernels come from the built module (`pnpm --filter @keel/mlp build`).
 * WebGPU is skipped where there is no adapter, except under CI, where that is a failure.
 */
import { createCpuDevice } from '@keel/device-cpu';
import { listWebGpuAdapters } from '@keel/device-webgpu';
import { ErrorCode, KeelError } from '@keel/fence';
import { describe, expect, it } from 'vitest';
import type { TrainDataParallelResult } from '../../src/data-parallel/data-parallel-options';
import { packParameters, REFERENCE_MLP, trainMlp, trainMlpDataParallel } from '../../src/index';

const CPU_KERNELS = new URL('../../dist/kernels/mlp-cpu.js', import.meta.url);
const STEPS = 5;
const BATCH = 64;
const packed = packParameters({ ...REFERENCE_MLP, batch: BATCH }, 256);

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  return worst;
}

/** What every data-parallel run must show, whatever its devices. */
function expectHonestRun(r: TrainDataParallelResult, devices: number): void {
  expect(r.losses).toHaveLength(STEPS);
  for (const loss of r.losses) expect(Number.isFinite(loss)).toBe(true);
  expect(r.losses[STEPS - 1]).toBeLessThan(r.losses[0]!);
  expect(r.replicasIdentical).toBe(true);
  expect(r.devices).toHaveLength(devices);
  for (const step of r.shards) expect(step.rows.reduce((a, b) => a + b, 0)).toBe(BATCH);
  // Only gradients (with the 4-byte shard loss, padded) go to the host and weights come back: one read
  // and one write of the packed parameters per device per step; the replicas cross once each way.
  const t = r.transfers;
  expect(t.gradientBytesPerDevice).toBe(packed.gradientBytes);
  const pinned = r.devices.filter((d) => d.pinned).length;
  // CPU devices map their memory: their gradients are read in place (pinned), WebGPU's are copied.
  expect(r.devices.map((d) => d.pinned)).toEqual(r.devices.map((d) => d.backend === 'cpu'));
  expect(t.gradientsToHost).toBe(STEPS * (devices - pinned) * packed.gradsBytes);
  expect(t.gradientsPinned).toBe(STEPS * pinned * packed.gradsBytes);
  expect(t.weightsToDevice).toBe(STEPS * devices * packed.packedBytes);
  expect(t.minimumBytesPerStep).toBe(2 * devices * packed.gradientBytes);
  expect(t.reductionBytesPerStep / t.minimumBytesPerStep).toBeLessThan(1.001);
  expect(t.initialWeightsToDevice).toBe(devices * packed.packedBytes);
  expect(t.finalWeightsToHost).toBe(devices * packed.packedBytes);
  expect(t.batchesToDevice).toBe(STEPS * BATCH * 4 * (REFERENCE_MLP.layers[0]! + 1));
  // Placement: every operation went through the scheduler; gradients are read where they were made,
  // the reduction waits on a join of every device's read (or, pinned, its step).
  const { stats, trace, targets, operationsPerStep } = r.placement;
  expect(stats.submitted).toBe(STEPS * operationsPerStep);
  expect(targets).toHaveLength(2 * devices);
  const last = trace.slice(-operationsPerStep);
  const reads = last.filter((p) => p.op === 'read');
  expect(reads).toHaveLength(devices - pinned);
  for (const p of reads) {
    expect(p.reason).toBe('producer');
    expect(targets[p.target]).toMatch(/ compute$/);
  }
  const executes = last.filter((p) => p.op === 'execute');
  expect(executes.map((p) => targets[p.target])).toEqual(r.devices.map((d) => `${d.label} compute`));
  const reduction = last.filter((p) => p.op === 'host-call');
  expect(reduction).toHaveLength(1);
  expect(reduction[0]!.reason).toBe(devices > 1 ? 'join' : 'producer');
  expect(stats.locality.share).toBeGreaterThan(0.5);
}

describe('trainMlpDataParallel on CPU devices', () => {
  it('cpu:2 gives the loss curve of cpu and of trainMlp, with identical replicas', async () => {
    const options = { steps: STEPS, batch: BATCH, cpuKernelUrl: CPU_KERNELS } as const;
    const one = await trainMlpDataParallel({ ...options, devices: 'cpu' });
    const two = await trainMlpDataParallel({ ...options, devices: 'cpu:2' });
    const single = await trainMlp({ ...options, device: 'cpu', warmup: 0 });
    expectHonestRun(one, 1);
    expectHonestRun(two, 2);
    expect(two.balance).toBe('even');
    expect(two.shards).toEqual([{ step: 0, rows: [32, 32] }]);
    expect(maxAbsDiff(two.losses, one.losses)).toBeLessThan(1e-4);
    expect(maxAbsDiff(one.losses, single.losses)).toBeLessThan(1e-4);
    // The trained weights agree too (within reduction order).
    expect(maxAbsDiff(two.params.weights[1]!, single.params.weights[1]!)).toBeLessThan(1e-4);
    // Three devices (uneven shards 22/21/21; the general reduction path) give the same curve.
    const three = await trainMlpDataParallel({ ...options, devices: 'cpu:3' });
    expectHonestRun(three, 3);
    expect(three.shards[0]!.rows).toEqual([22, 21, 21]);
    expect(maxAbsDiff(three.losses, one.losses)).toBeLessThan(1e-4);
    // Even shards on equal devices: bit-for-bit reproducible.
    const again = await trainMlpDataParallel({ ...options, devices: 'cpu:2' });
    expect(Array.from(again.losses)).toEqual(Array.from(two.losses));
  }, 120_000);

  it("trains on the caller's devices and leaves them open", async () => {
    const devices = [0, 1].map((i) =>
      createCpuDevice({ mode: 'task', queues: 2, workersPerQueue: 1, label: `mine${i}` }),
    );
    try {
      const r = await trainMlpDataParallel({
        devices,
        steps: STEPS,
        batch: BATCH,
        cpuKernelUrl: CPU_KERNELS,
      });
      expectHonestRun(r, 2);
      expect(r.devices.map((d) => d.label)).toEqual(['device0', 'device1']);
      // Still usable.
      const s = devices[0]!.createSemaphore(0);
      s.signal(1);
      expect(s.value).toBe(1);
    } finally {
      for (const d of devices) await d.destroy();
    }
  }, 120_000);

  it('stops at a step boundary through abortSignal (CANCELLED) and releases what it made', async () => {
    const devices = [0, 1].map((i) =>
      createCpuDevice({ mode: 'task', queues: 2, workersPerQueue: 1, label: `ab${i}` }),
    );
    const controller = new AbortController();
    const seen: number[] = [];
    try {
      const error = await trainMlpDataParallel({
        devices,
        steps: 20,
        batch: BATCH,
        cpuKernelUrl: CPU_KERNELS,
        abortSignal: controller.signal,
        onStep: (p) => {
          seen.push(p.step);
          if (p.step === 2) controller.abort('enough');
        },
      }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(KeelError.is(error, ErrorCode.CANCELLED)).toBe(true);
      expect(seen).toEqual([1, 2]);
      // The caller's devices still work: a fresh run on them trains.
      const again = await trainMlpDataParallel({
        devices,
        steps: 2,
        batch: BATCH,
        cpuKernelUrl: CPU_KERNELS,
      });
      expect(again.replicasIdentical).toBe(true);
    } finally {
      for (const d of devices) await d.destroy();
    }
  }, 120_000);

  it('a device lost mid-run fails the run with a KeelError, without hanging', async () => {
    const devices = [0, 1].map((i) =>
      createCpuDevice({ mode: 'task', queues: 2, workersPerQueue: 1, label: `lost${i}` }),
    );
    try {
      const error = await trainMlpDataParallel({
        devices,
        steps: 20,
        batch: BATCH,
        cpuKernelUrl: CPU_KERNELS,
        balance: 'measured', // its timing promises must not leak rejections either
        onStep: (p) => {
          if (p.step === 2) void devices[1]!.destroy();
        },
      }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(KeelError.is(error)).toBe(true);
    } finally {
      for (const d of devices) await d.destroy();
    }
  }, 120_000);

  it('refuses bad options with KeelError naming them', async () => {
    const bad = async (options: unknown): Promise<KeelError> => {
      try {
        await trainMlpDataParallel(options as Parameters<typeof trainMlpDataParallel>[0]);
      } catch (error) {
        if (KeelError.is(error)) return error;
        throw error;
      }
      throw new Error('expected a KeelError');
    };
    expect((await bad({ devices: 'cpu,gpu' })).message).toContain("unknown device kind 'gpu'");
    expect((await bad({ devices: 'cpu:2', batch: 1 })).message).toContain('at least one row');
    expect((await bad({ devices: 'cpu', balance: 'fast' })).message).toContain('balance');
    expect((await bad({ devices: 'cpu', stepz: 2 })).message).toContain('stepz');
    expect((await bad({})).code).toBe(ErrorCode.INVALID_ARGUMENT);
    const cpu = createCpuDevice({ mode: 'sync', queues: 1 });
    try {
      expect((await bad({ devices: [cpu] })).message).toContain('each needs 2');
    } finally {
      await cpu.destroy();
    }
  });
});

const adapters = await listWebGpuAdapters();
const noWebGpu = adapters.length === 0;
if (noWebGpu && process.env.CI) throw new Error('CI must run the WebGPU data-parallel test');

describe.skipIf(noWebGpu)('trainMlpDataParallel on CPU and WebGPU', () => {
  it('cpu,webgpu gives the loss curve of cpu, with shards sized by measured speed', async () => {
    const options = { steps: STEPS, batch: BATCH, cpuKernelUrl: CPU_KERNELS, rebalanceEvery: 2 } as const;
    const mixed = await trainMlpDataParallel({ ...options, devices: 'cpu,webgpu' });
    const one = await trainMlpDataParallel({ ...options, devices: 'cpu' });
    expectHonestRun(mixed, 2);
    expect(mixed.balance).toBe('measured');
    expect(mixed.devices.map((d) => d.backend)).toEqual(['cpu', 'webgpu']);
    expect(mixed.devices.every((d) => d.rowsPerMs > 0)).toBe(true);
    // WGSL and the WebAssembly kernels round differently; the curves agree to reduction order.
    expect(maxAbsDiff(mixed.losses, one.losses)).toBeLessThan(1e-3);
  }, 300_000);

  it('webgpu:0x2: two Dawn devices on one adapter train with even shards and identical replicas', async () => {
    const r = await trainMlpDataParallel({ devices: 'webgpu:0x2', steps: STEPS, batch: BATCH });
    expectHonestRun(r, 2);
    expect(r.balance).toBe('even');
    expect(r.devices.map((d) => d.label)).toEqual(['webgpu:0', 'webgpu:0#1']);
    expect(r.devices.every((d) => !d.pinned && d.rows === BATCH / 2)).toBe(true);
  }, 300_000);
});
