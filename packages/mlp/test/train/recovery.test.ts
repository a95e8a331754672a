/**
 * Training that survives a lost device (`trainMlp({ checkpointEvery })`; the `keel demo
 * --checkpoint-every` CLI test is in packages/keel/test/demo/recovery.test.ts): the test destroys the device in the middle of the run (from `onStep`, as a
 * driver reset or tab eviction would) and checks that the run completes every step, that the loss
 * curve continues from the last mirror (the resumed steps compute the very losses of an uninterrupted
 * run, not the initial ~2.3), that at most K reported steps are redone, and that the summary says so.
 * CPU device in task and sync mode; WebGPU (raw `GPUDevice.destroy()`) where an adapter exists.
 */
import { createCpuDevice } from '@keel/device-cpu';
import { createWebGpuDevice } from '@keel/device-webgpu';
import { ErrorCode, KeelError } from '@keel/fence';
import type { Device } from '@keel/hal';
import { describe, expect, it } from 'vitest';
import { loseDevice } from '../../src/train/device-loss';
import { formatBytes, formatSummary } from '../../src/train/format-summary';
import type { RecoveryEvent, StepProgress } from '../../src/train/step-progress';
import { trainMlp } from '../../src/train/train-mlp';
import type { TrainMlpOptions } from '../../src/train/train-options';

const CPU_KERNELS = new URL('../../dist/kernels/mlp-cpu.js', import.meta.url);

interface LossyRun {
  readonly result: Awaited<ReturnType<typeof trainMlp>>;
  readonly seen: StepProgress[];
  readonly events: RecoveryEvent[];
  readonly devices: Device[];
}

/** Trains with `options`, destroying the device once step `loseAt` was reported. */
async function trainLosingDevice(options: TrainMlpOptions, loseAt: number): Promise<LossyRun> {
  const seen: StepProgress[] = [];
  const events: RecoveryEvent[] = [];
  const devices: Device[] = [];
  let lost = false;
  const result = await trainMlp({
    cpuKernelUrl: CPU_KERNELS,
    ...options,
    onStart: ({ device }) => devices.push(device),
    onStep: (p) => {
      seen.push(p);
      if (!lost && p.step === loseAt) {
        lost = true;
        loseDevice(devices[0]!);
      }
    },
    onRecovery: (e) => events.push(e),
  });
  return { result, seen, events, devices };
}

/** The checks every recovered run shares. */
function expectRecovered(run: LossyRun, steps: number, every: number, loseAt: number): void {
  const { result: r, seen, events } = run;
  expect(r.steps).toBe(steps);
  const cp = r.checkpoint!;
  expect(cp.every).toBe(every);
  expect(cp.recoveries).toBe(1);
  expect(events).toHaveLength(1);
  const e = events[0]!;
  expect(e.fromMirror).toBe(true);
  expect(e.lostAfterStep).toBeGreaterThanOrEqual(loseAt);
  // Resumed right after a checkpoint (a multiple of K steps), losing at most K reported steps.
  expect((e.resumeAtStep - 1) % every).toBe(0);
  expect(e.resumeAtStep).toBeGreaterThan(1);
  const redone = Math.max(0, e.lostAfterStep - (e.resumeAtStep - 1));
  const unreported = Math.max(0, e.resumeAtStep - 1 - e.lostAfterStep);
  expect(e.stepsRedone).toBe(redone);
  expect(e.stepsRedone).toBeLessThanOrEqual(every);
  expect(unreported).toBeLessThanOrEqual(2); // at most the steps in flight at the loss
  expect(cp.stepsRedone).toBe(redone);
  expect(cp.stepsUnreported).toBe(unreported);
  expect(cp.resumedAt).toEqual([e.resumeAtStep]);
  // Every step was reported (the redone ones twice) but those that ran and were mirrored before their
  // loss reached the host: NaN.
  expect(seen.map((p) => p.step)).toEqual([
    ...Array.from({ length: e.lostAfterStep }, (_, i) => i + 1),
    ...Array.from({ length: steps - e.resumeAtStep + 1 }, (_, i) => e.resumeAtStep + i),
  ]);
  r.losses.forEach((loss, k) => {
    expect(Number.isNaN(loss), `step ${k + 1}`).toBe(k >= e.lostAfterStep && k < e.resumeAtStep - 1);
  });
  // The curve continues from the mirror, far below the initial ~2.3; when steps were redone, the first
  // resumed step computes the very loss it had before (same mirrored weights, same batch).
  const after = seen[e.lostAfterStep]!;
  expect(after.step).toBe(e.resumeAtStep);
  expect(after.loss).toBeLessThan(0.5 * r.losses[0]!);
  expect(after.loss).toBeLessThan(1.5 * seen[e.lostAfterStep - 1]!.loss);
  if (redone > 0) expect(after.loss).toBeCloseTo(seen[e.resumeAtStep - 1]!.loss, 3);
  // Two devices, two recordings; the replays include the redone steps.
  expect(r.commands.recordings).toBe(2);
  expect(r.commands.replays).toBeGreaterThanOrEqual(steps + e.stepsRedone);
  expect(cp.checkpoints).toBeGreaterThanOrEqual(Math.floor(steps / every) - 1);
  expect(cp.mirrors).toBe(6 * cp.checkpoints);
  const summary = formatSummary(r);
  expect(summary).toMatch(/checkpoints +parameters mirrored to host every \d+ steps?/);
  expect(summary).toContain(
    `recovery        1 device lost and replaced; resumed at step ${e.resumeAtStep} from the last mirror; ${e.stepsRedone} step`,
  );
}

describe('trainMlp survives a lost CPU device', { timeout: 180_000 }, () => {
  it('task mode: the device is destroyed after step 17 of 40; the run resumes from the mirror and computes the same curve', async () => {
    const steps = 40;
    const every = 5;
    const baseline = await trainMlp({
      device: 'cpu',
      steps,
      cpuKernelUrl: CPU_KERNELS,
      checkpointEvery: every,
    });
    expect(baseline.checkpoint).toMatchObject({ recoveries: 0, stepsRedone: 0, resumedAt: [] });
    expect(baseline.checkpoint!.checkpoints).toBeGreaterThanOrEqual(7);
    expect(formatSummary(baseline)).toContain('recovery        no device lost');
    const run = await trainLosingDevice({ device: 'cpu', steps, checkpointEvery: every }, 17);
    expectRecovered(run, steps, every, 17);
    // Same losses as the uninterrupted run, step for step (the resumed run replays the same batches
    // from the same mirrored weights).
    for (let k = 0; k < steps; k++) {
      const loss = run.result.losses[k]!;
      if (!Number.isNaN(loss)) expect(loss).toBeCloseTo(baseline.losses[k]!, 4);
    }
    for (const [i, w] of run.result.params.weights.entries()) {
      for (let j = 0; j < 16; j++) expect(w[j]).toBeCloseTo(baseline.params.weights[i]![j]!, 5);
    }
  });

  it("sync mode on the caller's device: the replacement is a sync device the run owns and destroys", async () => {
    const device = createCpuDevice({ mode: 'sync', queues: 2, label: 'mine' });
    try {
      const run = await trainLosingDevice({ device, steps: 16, batch: 64, checkpointEvery: 3 }, 8);
      expectRecovered(run, 16, 3, 8);
      expect(run.result.deviceName).toMatch(/sync/);
      expect(run.events[0]!.deviceName).toMatch(/sync/);
    } finally {
      await device.destroy();
    }
  });

  it('a loss before the first mirror landed restarts from the initial parameters', async () => {
    const baseline = await trainMlp({ device: 'cpu', steps: 8, batch: 64, cpuKernelUrl: CPU_KERNELS });
    const run = await trainLosingDevice({ device: 'cpu', steps: 8, batch: 64, checkpointEvery: 100 }, 2);
    expect(run.events).toHaveLength(1);
    expect(run.events[0]).toMatchObject({ fromMirror: false, resumeAtStep: 1, stepsRedone: 2 });
    for (let k = 0; k < 8; k++) expect(run.result.losses[k]).toBeCloseTo(baseline.losses[k]!, 4);
  });

  it('without checkpointEvery a lost device ends the run with a KeelError', async () => {
    const error = await trainLosingDevice({ device: 'cpu', steps: 20, batch: 64 }, 3).catch(
      (e: unknown) => e,
    );
    expect(KeelError.is(error), String(error)).toBe(true);
  });

  it('rejects bad recovery options with INVALID_ARGUMENT naming the option', async () => {
    for (const [bad, pattern] of [
      [{ checkpointEvery: 0 }, /option 'checkpointEvery' must be an integer in \[1, 1000000\], got 0/],
      [{ checkpointEvery: 2.5 }, /checkpointEvery/],
      [{ checkpointEvery: 2, reopenDevice: 'cpu' }, /option 'reopenDevice' must be a function, got "cpu"/],
    ] as const) {
      const error = await trainMlp(bad as unknown as TrainMlpOptions).catch((e: unknown) => e);
      expect(KeelError.is(error, ErrorCode.INVALID_ARGUMENT), String(error)).toBe(true);
      expect((error as Error).message).toMatch(pattern);
    }
  });
});

describe('what a recovered run reports', { timeout: 120_000 }, () => {
  it('traceSteps: the lost device keeps its part of the trace and the replacement records the rest (one pid each)', async () => {
    const steps = 8;
    const run = await trainLosingDevice(
      { device: 'cpu', steps, batch: 32, workers: 1, checkpointEvery: 2, traceSteps: 6 },
      4,
    );
    const e = run.events[0]!;
    const trace = run.result.trace!;
    expect(trace.otherData.devices).toBe(2);
    const executes = trace.traceEvents.filter((t) => t.name === 'queueExecute');
    const pids = [...new Set(executes.map((t) => t.pid))];
    expect(pids).toHaveLength(2);
    const [lostPid, newPid] = pids.sort((x, y) => x - y) as [number, number];
    // The replacement traced every step from where it resumed (inside the window) to the last one.
    expect(executes.filter((t) => t.pid === newPid)).toHaveLength(steps - e.resumeAtStep + 1);
    // The lost device traced the window's steps it ran: from step 3 to the loss.
    expect(executes.filter((t) => t.pid === lostPid).length).toBeGreaterThanOrEqual(1);
    const dispatchPids = new Set(trace.traceEvents.filter((t) => t.cat === 'dispatch').map((t) => t.pid));
    expect(dispatchPids).toEqual(new Set([lostPid, newPid]));
    const processes = trace.otherData.processes as Record<string, string>;
    expect(processes[String(lostPid)]).toMatch(/from step 3, lost after step \d+/);
    expect(processes[String(newPid)]).toBe(`${e.deviceName}: steps ${e.resumeAtStep}-${steps}`);
    // One clock: sorted, the replacement's events after the lost device's first one.
    const ts = trace.traceEvents.map((t) => t.ts);
    expect(ts).toEqual([...ts].sort((x, y) => x - y));
  });

  it('the summary says a recovery without a landed mirror resumed from the initial parameters', async () => {
    const run = await trainLosingDevice({ device: 'cpu', steps: 4, batch: 32, checkpointEvery: 5 }, 1);
    expect(run.events[0]).toMatchObject({ fromMirror: false, resumeAtStep: 1 });
    expect(run.result.checkpoint!.resumedFromMirror).toEqual([false]);
    const summary = formatSummary(run.result);
    expect(summary).toContain('resumed at step 1 from the initial parameters (no mirror yet)');
    expect(summary).not.toContain('from the last mirror');
  });

  it('bytes per direction include the checkpoint mirrors; the per-step batch is one batch after a recovery', async () => {
    const plain = await trainMlp({ device: 'cpu', steps: 12, batch: 32, cpuKernelUrl: CPU_KERNELS });
    const oneBatch = plain.transfers.batchesToDevice / 12;
    expect(plain.transfers.batchUploads).toBe(12);
    expect(plain.transfers.checkpointsToHost).toBe(0);
    const run = await trainLosingDevice({ device: 'cpu', steps: 12, batch: 32, checkpointEvery: 3 }, 7);
    const t = run.result.transfers;
    const cp = run.result.checkpoint!;
    expect(cp.mirroredBytes).toBeGreaterThan(0);
    expect(t.checkpointsToHost).toBe(cp.mirroredBytes);
    expect(t.deviceToHost).toBe(t.weightsToHost + t.lossToHost + cp.mirroredBytes);
    expect(t.batchUploads).toBeGreaterThan(12);
    expect(t.batchesToDevice).toBe(oneBatch * t.batchUploads);
    const summary = formatSummary(run.result);
    expect(summary).toContain(`${formatBytes(t.deviceToHost)}: weights `);
    expect(summary).toContain(`, checkpoints ${formatBytes(cp.mirroredBytes)} (parameter mirrors)`);
    expect(summary).toContain(
      `(${formatBytes(oneBatch)}/step, ${t.batchUploads} uploads: redone steps included`,
    );
    expect(formatSummary(plain)).toContain(`(${formatBytes(oneBatch)}/step, upload queue, double-buffered)`);
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
  `trainMlp survives a lost WebGPU device${gpuSkip === undefined ? '' : ` (skipped: ${gpuSkip})`}`,
  { timeout: 240_000 },
  () => {
    it('GPUDevice.destroy() after step 6 of 12: a new device, the mirror restored, the curve continues', async () => {
      const run = await trainLosingDevice({ device: 'webgpu', steps: 12, warmup: 2, checkpointEvery: 3 }, 6);
      expectRecovered(run, 12, 3, 6);
      expect(run.result.backend).toBe('webgpu');
      const cpu = await trainMlp({ device: 'cpu', steps: 12, cpuKernelUrl: CPU_KERNELS });
      for (let k = 0; k < 12; k++) {
        const loss = run.result.losses[k]!;
        if (!Number.isNaN(loss)) expect(loss).toBeCloseTo(cpu.losses[k]!, 2);
      }
    });
  },
);
