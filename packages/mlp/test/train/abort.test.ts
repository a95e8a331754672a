/**
 * `trainMlp({ abortSignal })`: the option is validated like every other one; an already-aborted signal
 * rejects CANCELLED before a device is opened; aborting mid-run stops at the next step boundary with
 * KeelError CANCELLED (cause = the signal's reason), after the steps already submitted finished, and
 * leaves a caller's device open and tidy (no queue memory held, still usable).
 * The CPU kernels come from the built module (`pnpm --filter @keel/mlp build` first; `pnpm test` does).
 */
import { createCpuDevice } from '@keel/device-cpu';
import { ErrorCode, KeelError } from '@keel/fence';
import { BufferUsage, type Device } from '@keel/hal';
import { describe, expect, it } from 'vitest';
import { trainMlp } from '../../src/train/train-mlp';
import type { TrainMlpOptions } from '../../src/train/train-options';

const CPU_KERNELS = new URL('../../dist/kernels/mlp-cpu.js', import.meta.url);

async function rejection(promise: Promise<unknown>): Promise<KeelError> {
  try {
    await promise;
  } catch (e) {
    if (KeelError.is(e)) return e;
    throw new Error(`not a KeelError: ${String(e)}`);
  }
  throw new Error('did not reject');
}

describe('trainMlp abortSignal', { timeout: 60_000 }, () => {
  it('refuses a value that is not an AbortSignal', async () => {
    for (const bad of [true, 'stop', {}, { aborted: false }]) {
      const e = await rejection(trainMlp({ abortSignal: bad } as unknown as TrainMlpOptions));
      expect(e.code).toBe(ErrorCode.INVALID_ARGUMENT);
      expect(e.message).toMatch(/trainMlp: option 'abortSignal' must be an AbortSignal, got /);
    }
  });

  it('rejects CANCELLED before opening a device when the signal is already aborted', async () => {
    let started = false;
    const reason = new Error('user pressed Stop');
    const e = await rejection(
      trainMlp({
        steps: 5,
        cpuKernelUrl: CPU_KERNELS,
        abortSignal: AbortSignal.abort(reason),
        onStart: () => {
          started = true;
        },
      }),
    );
    expect(e.code).toBe(ErrorCode.CANCELLED);
    expect(e.message).toMatch(/aborted through its abortSignal before the first step/);
    expect(e.cause).toBe(reason);
    expect(started).toBe(false);
  });

  it.each([true, false])(
    "stops at the next step boundary (overlap %s) and leaves a caller's device tidy",
    async (overlap) => {
      const device = createCpuDevice({ mode: 'sync', queues: 2 });
      try {
        const controller = new AbortController();
        const seen: number[] = [];
        const e = await rejection(
          trainMlp({
            device,
            steps: 50,
            batch: 16,
            overlap,
            cpuKernelUrl: CPU_KERNELS,
            abortSignal: controller.signal,
            onStep: (p) => {
              seen.push(p.step);
              if (p.step === 3) controller.abort();
            },
          }),
        );
        expect(e.code).toBe(ErrorCode.CANCELLED);
        expect(e.message).toMatch(/after step 3$/);
        expect(e.cause).toBe(controller.signal.reason);
        // No step is reported after the one that aborted; the run stopped long before 50.
        expect(seen).toEqual([1, 2, 3]);
        expect(device.heldQueueBytes()).toBe(0);
        expect(device.createBuffer({ byteLength: 16, usage: BufferUsage.DEFAULT }).state).toBe('live');
        // The device still trains a full run afterwards.
        const r = await trainMlp({ device, steps: 2, batch: 16, cpuKernelUrl: CPU_KERNELS });
        expect(r.losses).toHaveLength(2);
      } finally {
        await device.destroy();
      }
    },
  );

  it('stops a run on a device it opened (task mode) and destroys it', async () => {
    const controller = new AbortController();
    let opened: Device | undefined;
    const e = await rejection(
      trainMlp({
        device: 'cpu',
        steps: 50,
        batch: 16,
        workers: 1,
        cpuKernelUrl: CPU_KERNELS,
        abortSignal: controller.signal,
        onStart: ({ device }) => {
          opened = device;
        },
        onStep: (p) => {
          if (p.step === 2) controller.abort();
        },
      }),
    );
    expect(e.code).toBe(ErrorCode.CANCELLED);
    expect(e.message).toMatch(/after step 2$/);
    // The run destroyed the device it opened: its `lost` promise settles with the reason.
    const lost = await Promise.race([
      opened!.lost.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5_000)),
    ]);
    expect(lost).toBe(true);
  });

  it('an abort after the last submission (while the last losses are read) still rejects CANCELLED', async () => {
    const device = createCpuDevice({ mode: 'sync', queues: 2 });
    try {
      const controller = new AbortController();
      const seen: number[] = [];
      const e = await rejection(
        trainMlp({
          device,
          steps: 3,
          batch: 16,
          cpuKernelUrl: CPU_KERNELS,
          abortSignal: controller.signal,
          onStep: (p) => {
            seen.push(p.step);
            if (p.step === 1) controller.abort();
          },
        }),
      );
      expect(e.code).toBe(ErrorCode.CANCELLED);
      expect(e.cause).toBe(controller.signal.reason);
      // The three steps were submitted before the abort (overlap): their losses still arrived.
      expect(seen).toEqual([1, 2, 3]);
      expect(device.heldQueueBytes()).toBe(0);
      const r = await trainMlp({ device, steps: 2, batch: 16, cpuKernelUrl: CPU_KERNELS });
      expect(r.losses).toHaveLength(2);
    } finally {
      await device.destroy();
    }
  });
});
