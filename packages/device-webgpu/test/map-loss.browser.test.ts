/** Failed maps of reads in headless Chromium (map-loss-cases.ts), whose `destroy()` rejects maps before `lost` settles. */
import { defineMapLossTests } from './map-loss-cases';

defineMapLossTests('@keel/device-webgpu failed maps in Chromium', 'browser');
