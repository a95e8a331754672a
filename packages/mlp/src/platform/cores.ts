/**
 * Platform layer (Node): how many cores a training run may use. The browser build (`dist/index.js`,
 * the `browser` and `default` conditions of the package's `exports`) uses `cores.browser.ts`
 * instead, chosen at build time, so `node:os` never enters a browser bundle.
 */
import { availableParallelism } from 'node:os';

/** The number of logical cores this process may use (at least 1). */
export function hardwareConcurrency(): number {
  return availableParallelism();
}
