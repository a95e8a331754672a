/** The WebGPU-specific tests (device-cases.ts, write-cases.ts) on Dawn in Node; skipped with the reason where there is no adapter. */
import { describe } from 'vitest';
import { defineDeviceTests } from './device-cases';
import { probeWebGpu } from './webgpu-probe';
import { defineWriteTests } from './write-cases';

const probe = await probeWebGpu();

describe.skipIf(!probe.available)(
  `@keel/device-webgpu on Dawn${probe.available ? '' : ` (${probe.reason})`}`,
  () => {
    defineDeviceTests('device');
    defineWriteTests('queueWrite staging');
  },
);
