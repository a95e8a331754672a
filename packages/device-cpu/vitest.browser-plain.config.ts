/**
 * Browser project: device-cpu in headless Chromium on a page served WITHOUT the cross-origin isolation
 * headers (no SharedArrayBuffer): task mode must fail with a KeelError naming them, sync mode must work.
 */
import { browserProject } from './test/browser-project.ts';

export default browserProject('@keel/device-cpu-browser-plain', 'test/**/*.browser-plain.test.ts', false);
