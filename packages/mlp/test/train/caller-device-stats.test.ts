/**
 * On a caller's device that already ran other work (an aborted run, an earlier run), `trainMlp`
 * reports the run's own allocator figures: allocas, deallocas, reuses and growths counted from the
 * run's start, not over the device's life; the peaks, which a device cannot reset, are labelled as the
 * device's (`transient.peaksSince: 'device'`, and the summary says so). A fresh device gives 'run'.
 * The CPU kernels come from the built module (`pnpm --filter @keel/mlp build` first).
 */
import { createCpuDevice } from '@keel/device-cpu';
import { describe, expect, it } from 'vitest';
import { formatSummary } from '../../src/train/format-summary';
import { trainMlp } from '../../src/train/train-mlp';

const CPU_KERNELS = new URL('../../dist/kernels/mlp-cpu.js', import.meta.url);

describe("trainMlp on a caller's device used before", { timeout: 60_000 }, () => {
  it('reports the run’s own allocas, deallocas, reuses and growths, and labels the peaks', async () => {
    const device = createCpuDevice({ mode: 'task', queues: 2, workersPerQueue: 1 });
    try {
      const controller = new AbortController();
      await trainMlp({
        device,
        steps: 10,
        batch: 16,
        cpuKernelUrl: CPU_KERNELS,
        abortSignal: controller.signal,
        onStep: (p) => {
          if (p.step === 2) controller.abort();
        },
      }).catch(() => {});
      const first = await trainMlp({ device, steps: 3, batch: 16, cpuKernelUrl: CPU_KERNELS });
      const r = await trainMlp({ device, steps: 3, batch: 16, cpuKernelUrl: CPU_KERNELS });
      const a = r.transient.allocator!;
      expect(a.allocas).toBe(3);
      expect(a.deallocas).toBe(3);
      // Every alloca of the run reused the block of an earlier one: no growth within the run.
      expect(a.reuseDominated + a.reuseFrontierReached).toBe(3);
      expect(a.growths).toBe(0);
      expect(a.waits).toBe(0);
      expect(first.transient.allocator?.allocas).toBe(3);
      expect(first.transient.peaksSince).toBe('device');
      expect(r.transient.peaksSince).toBe('device');
      const summary = formatSummary(r);
      expect(summary).toMatch(/allocator +3 allocas \/ 3 deallocas of a /);
      expect(summary).toContain('(peaks since the device was created, earlier work included)');
      expect(summary).toMatch(
        /reuse: \d same-queue \(dominated, no wait\), \d freed memory; 0 growths, 0 waits/,
      );
    } finally {
      await device.destroy();
    }
  });

  it('a fresh device: the peaks are the run’s and the summary does not qualify them', async () => {
    const device = createCpuDevice({ mode: 'sync', queues: 2 });
    try {
      const r = await trainMlp({ device, steps: 2, batch: 16, cpuKernelUrl: CPU_KERNELS });
      expect(r.transient.peaksSince).toBe('run');
      expect(r.transient.allocator?.allocas).toBe(2);
      expect(formatSummary(r)).not.toContain('peaks since the device was created');
    } finally {
      await device.destroy();
    }
  });
});
