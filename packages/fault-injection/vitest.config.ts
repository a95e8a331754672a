/**
 * The fault-injection project: injected faults at every layer, seeded random programs, a short soak and
 * an argument fuzz, on cpu `sync`, cpu `task` and WebGPU (Dawn in Node). Runs with `--expose-gc` so the
 * soak measures heap after a collection; files run one at a time so the soak's RSS, handle and thread
 * counts are not disturbed by another file of this project.
 */
import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: '@keel/fault-injection',
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    execArgv: ['--expose-gc'],
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 30_000,
  },
});
