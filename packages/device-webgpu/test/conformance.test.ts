/**
 * The conformance suite (@keel/cts) on Dawn in Node: lavapipe on CPU-only machines, the GPU's Vulkan
 * driver elsewhere. Skipped with the reason in the title where there is no adapter, failing under CI.
 */
import { defineDeviceConformance } from '@keel/cts';
import { describe } from 'vitest';
import { conformanceOptions, ctsWebGpuDevice } from './conformance-options';
import { probeWebGpu } from './webgpu-probe';

const probe = await probeWebGpu();

describe.skipIf(!probe.available)(
  `@keel/device-webgpu on Dawn${probe.available ? '' : ` (${probe.reason})`}`,
  () => {
    defineDeviceConformance('conformance', (options) => ctsWebGpuDevice(options), conformanceOptions);
  },
);
