import { defineProject } from 'vitest/config';

/** Node project: the device on Dawn (the `webgpu` package). The browser project is vitest.browser.config.ts. */
export default defineProject({
  test: {
    name: '@keel/device-webgpu',
    include: ['test/**/*.test.ts'],
    exclude: ['test/**/*.browser.test.ts', 'test/browser-unavailable.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
