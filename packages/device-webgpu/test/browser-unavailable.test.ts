/** Stands in for the browser project when no Chromium is installed (see vitest.browser.config.ts). */
import { describe, it } from 'vitest';

const reason = process.env.KEEL_BROWSER_SKIP_REASON ?? 'no browser';

describe.skip(`@keel/device-webgpu in Chromium: skipped, ${reason}`, () => {
  it('runs the conformance suite in a browser', () => {});
});
