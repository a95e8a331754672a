import { defineProject } from 'vitest/config';

/**
 * Node project (worker_threads). The browser projects are vitest.browser.config.ts (cross-origin
 * isolated page) and vitest.browser-plain.config.ts (a page without the isolation headers).
 */
export default defineProject({
  test: {
    name: '@keel/device-cpu',
    include: ['test/**/*.test.ts'],
    exclude: [
      'test/**/*.browser.test.ts',
      'test/**/*.browser-plain.test.ts',
      'test/browser-unavailable.test.ts',
    ],
  },
});
