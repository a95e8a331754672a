/** Browser project: device-cpu in headless Chromium on a cross-origin isolated page (see test/browser-project.ts). */
import { browserProject } from './test/browser-project.ts';

export default browserProject('@keel/device-cpu-browser', 'test/**/*.browser.test.ts', true);
