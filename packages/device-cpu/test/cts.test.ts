/**
 * The conformance suite (@keel/cts) against both modes of the CPU device. Imports the built package
 * (dist/node) so that task mode finds dist/node/worker.js.
 */
import { defineDeviceConformance } from '@keel/cts';
import { type CpuDevice, createCpuDevice } from '../dist/node/index.js';
import { cpuCtsKernels } from './cts-kernels';

function handle(device: CpuDevice) {
  return { device, kernels: cpuCtsKernels, heldQueueBytes: () => device.heldQueueBytes() };
}

defineDeviceConformance('device-cpu sync', (options) =>
  handle(createCpuDevice({ mode: 'sync', queues: 2, ...options })),
);

defineDeviceConformance('device-cpu task (2 queues × 2 workers)', (options) =>
  handle(createCpuDevice({ mode: 'task', queues: 2, workersPerQueue: 2, ...options })),
);
