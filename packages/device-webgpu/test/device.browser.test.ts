/** The WebGPU-specific tests (device-cases.ts, write-cases.ts) in headless Chromium. */
import { defineDeviceTests } from './device-cases';
import { defineWriteTests } from './write-cases';

defineDeviceTests('@keel/device-webgpu in Chromium');
defineWriteTests('@keel/device-webgpu queueWrite staging in Chromium');
