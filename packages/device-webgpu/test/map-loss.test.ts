/**
 * Failed maps of reads on Dawn in Node (map-loss-cases.ts): with Dawn's own order (`lost` settles
 * before the maps reject) and with a browser's (the maps reject first). Skipped with the reason where
 * there is no adapter.
 */
import { describe } from 'vitest';
import { defineMapLossTests } from './map-loss-cases';
import { probeWebGpu } from './webgpu-probe';

const probe = await probeWebGpu();

describe.skipIf(!probe.available)(
  `@keel/device-webgpu failed maps on Dawn${probe.available ? '' : ` (${probe.reason})`}`,
  () => {
    defineMapLossTests("Dawn's order", 'dawn');
    defineMapLossTests("a browser's order", 'mimic-browser');
  },
);
