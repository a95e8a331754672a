/**
 * The conformance suite (@keel/cts) on both modes of the CPU device inside Chromium, on a cross-origin
 * isolated page (vitest.browser.config.ts): task mode runs on module Web Workers over SharedArrayBuffer
 * slabs. Imports the browser build (dist/, the default), whose worker.js Vite serves as a module worker.
 */
import { defineDeviceConformance } from '@keel/cts';
import { describe, expect, it } from 'vitest';
import { type CpuDevice, createCpuDevice } from '../dist/index.js';
import { cpuCtsKernels } from './cts-kernels';

function handle(device: CpuDevice) {
  return { device, kernels: cpuCtsKernels, heldQueueBytes: () => device.heldQueueBytes() };
}

describe('the page', () => {
  it('is cross-origin isolated, and task mode is the default there', async () => {
    expect(globalThis.crossOriginIsolated).toBe(true);
    const device = createCpuDevice({ queues: 1, workersPerQueue: 2 });
    try {
      expect(device.mode).toBe('task');
      expect(device.info.features).toContain('shared-memory');
      expect(device.liveWorkers).toBe(2);
    } finally {
      await device.destroy();
    }
    expect(device.liveWorkers).toBe(0);
  });
});

defineDeviceConformance('device-cpu sync (Chromium)', (options) =>
  handle(createCpuDevice({ mode: 'sync', queues: 2, ...options })),
);

defineDeviceConformance('device-cpu task on Web Workers (Chromium, 2 queues × 2 workers)', (options) =>
  handle(createCpuDevice({ mode: 'task', queues: 2, workersPerQueue: 2, ...options })),
);
