/**
 * The contract of `trainMlpDataParallel` at its edges: an abort during the last step's onStep, caller
 * devices refused before anything opens (stand-ins, destroyed devices, a batch too small for them), a
 * lost device reported as its loss whichever operation noticed it, the measured speed against the
 * device trace's execute times, and re-balances counted as applied, on the step they apply.
 * CPU devices only; kernels from the built module (`pnpm --filter @keel/mlp build`).
 */
import { createCpuDevice } from '@keel/device-cpu';
import { ErrorCode, Fence, KeelError } from '@keel/fence';
import type { Device } from '@keel/hal';
import { describe, expect, it } from 'vitest';
import { trainMlpDataParallel } from '../../src/index';

const CPU_KERNELS = new URL('../../dist/kernels/mlp-cpu.js', import.meta.url);

type Options = Parameters<typeof trainMlpDataParallel>[0];

/** The KeelError the run rejects with (fails the test when it resolves or throws something else). */
async function failure(options: Options): Promise<KeelError> {
  const outcome = await trainMlpDataParallel(options).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!KeelError.is(outcome)) throw new Error(`expected a KeelError, got ${String(outcome)}`);
  return outcome;
}

/** Two task-mode CPU devices of the caller's (destroyed after `body`). */
async function withDevices(label: string, body: (devices: Device[]) => Promise<void>): Promise<void> {
  const devices = [0, 1].map((i) =>
    createCpuDevice({ mode: 'task', queues: 2, workersPerQueue: 1, label: `${label}${i}` }),
  );
  try {
    await body(devices);
  } finally {
    for (const d of devices) await d.destroy().catch(() => {});
  }
}

/** Makes every execute of `device` start `ms` later (a host call timer in front of it, on its queue). */
function slowDown(device: Device, ms: number): void {
  const execute = device.queueExecute.bind(device);
  const gate = device.createSemaphore(0);
  let gates = 0;
  const wait = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
  (device as { queueExecute: Device['queueExecute'] }).queueExecute = (affinity, w, signal, cbs, tables) => {
    const open = Fence.of({ semaphore: gate, value: ++gates });
    device.queueHostCall(affinity, w, open, wait);
    execute(affinity, open, signal, cbs, tables);
  };
}

describe('trainMlpDataParallel: aborts', () => {
  it("an abort during the last step's onStep is CANCELLED, naming trainMlpDataParallel", async () => {
    const controller = new AbortController();
    const error = await failure({
      devices: 'cpu:2',
      steps: 3,
      batch: 16,
      cpuKernelUrl: CPU_KERNELS,
      abortSignal: controller.signal,
      onStep: (p) => {
        if (p.step === 3) controller.abort('late');
      },
    });
    expect(error.code).toBe(ErrorCode.CANCELLED);
    expect(error.message).toMatch(/^trainMlpDataParallel: the run was aborted .* after step 3$/);
    expect(error.cause).toBe('late');
  }, 60_000);
});

describe("trainMlpDataParallel: the caller's devices, checked before anything opens", () => {
  it('refuses an object with an info but not the methods the run calls, naming the entry', async () => {
    const fake = {
      info: { name: 'fake', backend: 'cpu', queueCount: 2, limits: { minStorageBufferOffsetAlignment: 256 } },
    };
    const error = await failure({ devices: [fake as unknown as Device], steps: 1, batch: 8 });
    expect(error.code).toBe(ErrorCode.INVALID_ARGUMENT);
    expect(error.message).toMatch(/^trainMlpDataParallel: devices: entry 0 is not a Keel device/);
  });

  it('refuses a destroyed device up front, naming the option and the entry, the loss its cause', async () => {
    await withDevices('up', async ([a, dead]) => {
      await dead!.destroy();
      const error = await failure({ devices: [a!, dead!], steps: 1, batch: 8, cpuKernelUrl: CPU_KERNELS });
      expect(error.code).toBe(ErrorCode.FAILED_PRECONDITION);
      expect(error.message).toMatch(
        /^trainMlpDataParallel: devices: entry 1 \(device 'up1.*'\) is lost or destroyed/,
      );
      expect(error.cause).toBe(dead!.lostReason);
    });
  });

  it('refuses a batch with fewer rows than devices as the device-list form does', async () => {
    await withDevices('rows', async (devices) => {
      const error = await failure({ devices, steps: 1, batch: 1, cpuKernelUrl: CPU_KERNELS });
      expect(error.code).toBe(ErrorCode.INVALID_ARGUMENT);
      expect(error.message).toBe(
        'trainMlpDataParallel: batch (1) must give each of the 2 devices at least one row',
      );
    });
  });
});

describe('trainMlpDataParallel: a device lost mid-run', () => {
  it.each([
    ['in onStep', (lose: () => void) => lose()],
    ['a moment after onStep', (lose: () => void) => setTimeout(lose, 0)],
    ['3 ms after onStep', (lose: () => void) => setTimeout(lose, 3)],
  ])(
    'rethrows the loss (UNAVAILABLE naming the device) when it is destroyed %s',
    async (_, when) => {
      await withDevices('gone', async (devices) => {
        const error = await failure({
          devices,
          steps: 200,
          batch: 16,
          cpuKernelUrl: CPU_KERNELS,
          onStep: (p) => {
            if (p.step === 2) when(() => void devices[1]!.destroy());
          },
        });
        expect(`${error.code}: ${error.message}`).toMatch(/^UNAVAILABLE: device 'gone1[^']*': .*destroyed/);
      });
    },
    60_000,
  );
});

describe("trainMlpDataParallel: 'measured' shards", () => {
  it("rowsPerMs agrees with the device trace's execute times, even with a busy main thread", async () => {
    await withDevices('speed', async (devices) => {
      const traces = devices.map((d) => d.startTrace!());
      const r = await trainMlpDataParallel({
        devices,
        steps: 6,
        batch: 64,
        cpuKernelUrl: CPU_KERNELS,
        balance: 'measured',
        rebalanceEvery: 100,
        onStep: () => {
          // The main thread busy while the devices compute (as a WebGPU device or a UI would keep it).
          const until = performance.now() + 15;
          while (performance.now() < until);
        },
      });
      for (const t of traces) t.stop();
      for (const [d, trace] of traces.entries()) {
        const executes = (await trace.toChromeTrace()).traceEvents
          .filter((e) => e.name === 'queueExecute')
          .map((e) => e.dur / 1000);
        expect(executes).toHaveLength(6);
        // Steps 1..5 are measured (step 0 pays for first use).
        const traced = executes.slice(1).reduce((a, b) => a + b, 0) / 5;
        const report = r.devices[d]!;
        const measured = report.rows / report.rowsPerMs;
        expect(measured, `${measured} ms vs traced ${executes.join(', ')}`).toBeGreaterThan(traced / 3);
        expect(measured, `${measured} ms vs traced ${executes.join(', ')}`).toBeLessThan(traced * 3);
      }
    });
  }, 60_000);

  it('counts the re-balances that apply, from the step they apply on', async () => {
    await withDevices('slow', async (devices) => {
      slowDown(devices[1]!, 40);
      const r = await trainMlpDataParallel({
        devices,
        steps: 6,
        batch: 64,
        cpuKernelUrl: CPU_KERNELS,
        balance: 'measured',
        rebalanceEvery: 1,
      });
      // Step 1 is the first measured: its plan applies at step 3 (shard 2 was uploaded while step 1
      // computed). Step 2 still ran the old shards (measured as theirs, no new plan while one is on its
      // way), step 3 is skipped (the first on new shards), and no plan is made after step 4 (it could
      // not apply before the end).
      expect(r.shards).toHaveLength(2);
      expect(r.shards[1]!.step).toBe(3);
      expect(r.shards[1]!.rows[0]).toBeGreaterThan(r.shards[1]!.rows[1]!);
      expect(r.rebalances).toBe(r.shards.length - 1);
      expect(r.devices.map((d) => d.rows)).toEqual(r.shards[1]!.rows);
      expect(r.replicasIdentical).toBe(true);
    });
  }, 60_000);
});
