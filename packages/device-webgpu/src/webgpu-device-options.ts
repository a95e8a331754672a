/** Options of `createWebGpuDevice`. */
import type { UnhandledFailureHook } from '@keel/hal';
import './gpu-globals';

export interface WebGpuDeviceOptions {
  /**
   * Use this GPUDevice (a browser's, an application's, TensorFlow.js's...). The Keel device does not
   * destroy it: `destroy()` releases only what Keel created on it.
   */
  readonly device?: GPUDevice;
  /** Request the device from this adapter instead of asking `navigator.gpu` (or Dawn in Node). */
  readonly adapter?: GPUAdapter;
  /** Passed to `requestAdapter` when no device or adapter is given. */
  readonly adapterOptions?: GPURequestAdapterOptions;
  /**
   * Features to request in addition to none (only those the adapter has are requested). WebGPU feature
   * names (`GPUFeatureName`) as plain strings, so the published types need no WebGPU type alias.
   */
  readonly requiredFeatures?: readonly string[];
  /**
   * Node only: the toggles passed to the `webgpu` package's `create()` (default none). Keel adds
   * `disable-dawn-features=timestamp_quantization` (full-precision GPU timestamps for traces) unless
   * a flag names `timestamp_quantization`.
   */
  readonly dawnOptions?: readonly string[];
  /** Logical queues multiplexed onto the one GPUQueue, 1..32 (default 2). */
  readonly queueCount?: number;
  /** A name for messages and GPU object labels (default 'webgpu'). */
  readonly label?: string;
  /** Bytes of each slab of the transient (queueAlloca) pool (default 16 MiB). */
  readonly transientSlabSize?: number;
  /** Most bytes of slabs the transient pool may hold (default Infinity). */
  readonly transientBudget?: number;
  /** Bind groups kept per bind group layout in the device-wide LRU cache (default 4096). */
  readonly bindGroupCacheSize?: number;
  /** Resolved binding tables remembered per replay plan (default 16). */
  readonly tableCacheSize?: number;
  /**
   * Called with WebGPU errors nobody captured (default: `console.error` once per distinct message).
   */
  readonly onUncapturedError?: (error: GPUError) => void;
  /**
   * Hears about an operation's failure that no signal timepoint could deliver (an empty signal fence,
   * values something else already passed, semaphores already failed): `(error, { device, operation })`.
   * Default: one console warning per device. Failures propagated from a failed wait (ABORTED) and those
   * of destroy/loss are not reported.
   */
  readonly onUnhandledFailure?: UnhandledFailureHook;
}
