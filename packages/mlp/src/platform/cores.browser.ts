/**
 * Platform layer (browsers): how many cores a training run may use, from
 * `navigator.hardwareConcurrency` (1 where the browser does not say). Same contract as `cores.ts`.
 */

/** The number of logical cores this page may use (at least 1). */
export function hardwareConcurrency(): number {
  const n = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency;
  return typeof n === 'number' && Number.isInteger(n) && n >= 1 ? n : 1;
}
