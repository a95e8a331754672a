/** Stands in for the browser projects when no Chromium is installed (see test/browser-project.ts). */
import { describe, it } from 'vitest';

const reason = process.env.KEEL_BROWSER_SKIP_REASON ?? 'no browser';

describe.skip(`@keel/device-cpu in Chromium: skipped, ${reason}`, () => {
  it('runs the conformance suite in a browser', () => {});
});
