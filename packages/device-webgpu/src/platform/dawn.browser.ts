/**
 * The browser build's platform/dawn (see dawn.ts): there is no Dawn to load, `navigator.gpu` is the only
 * WebGPU. `HAS_DAWN` is false, so callers never reach `loadDawn`; it rejects with UNAVAILABLE anyway.
 */
import { ErrorCode, KeelError } from '@keel/fence';

/** Whether this build can load Dawn (the browser build: false). */
export const HAS_DAWN = false;

/** The flags as given (there is no Dawn to pass them to). */
export function dawnFlags(options: readonly string[]): string[] {
  return [...options];
}

/** Rejects with UNAVAILABLE: browsers get WebGPU from `navigator.gpu` only. */
export function loadDawn(_options: readonly string[]): Promise<GPU> {
  return Promise.reject(
    new KeelError(
      ErrorCode.UNAVAILABLE,
      'createWebGpuDevice: this environment has no WebGPU (navigator.gpu is undefined)',
    ),
  );
}
