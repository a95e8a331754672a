/** The WebGPU-specific tests (device-cases.ts) in headless Chromium. */
import { defineDeviceTests } from './device-cases';

defineDeviceTests('@keel/device-webgpu in Chromium');
