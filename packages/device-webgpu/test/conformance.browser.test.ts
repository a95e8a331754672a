/**
 * The conformance suite (@keel/cts) in headless Chromium (vitest browser mode, see
 * vitest.browser.config.ts). The browser has WebGPU whenever this project runs, so a missing adapter
 * is a failure here, never a skip.
 */
import { defineDeviceConformance } from '@keel/cts';
import { conformanceOptions, ctsWebGpuDevice } from './conformance-options';

defineDeviceConformance(
  '@keel/device-webgpu conformance (Chromium)',
  (options) => ctsWebGpuDevice(options),
  conformanceOptions,
);
