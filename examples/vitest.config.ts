import { defineProject } from 'vitest/config';

/** Runs every example (Node programs and the browser page), each asserting its own output. */
export default defineProject({
  test: {
    name: '@keel/examples',
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
