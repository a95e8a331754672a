import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      'packages/*',
      'packages/device-webgpu/vitest.browser.config.ts',
      'packages/device-cpu/vitest.browser.config.ts',
      'packages/device-cpu/vitest.browser-plain.config.ts',
      'examples',
    ],
    reporters: ['default'],
  },
});
