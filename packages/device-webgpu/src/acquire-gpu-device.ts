/**
 * Where the GPUDevice comes from: the caller's, else one requested from `navigator.gpu` (browsers, Deno,
 * Node with globals installed), else, in the Node build, from the optional `webgpu` package (Dawn,
 * platform/dawn.ts, loaded with a dynamic import only then). The browser build has no Dawn at all: its
 * platform/dawn resolves to dawn.browser.ts at build time (tsup.config.ts), so Dawn loading is not in
 * the browser graph.
 */
import { ErrorCode, KeelError } from '@keel/fence';
import { dawnFlags, HAS_DAWN, loadDawn } from './platform/dawn';
import type { WebGpuDeviceOptions } from './webgpu-device-options';

/** A GPUDevice with what Keel needs to know about where it came from. */
export interface AcquiredGpuDevice {
  readonly device: GPUDevice;
  /** The adapter's information (from the adapter, or `device.adapterInfo`). */
  readonly adapterInfo: GPUAdapterInfo | undefined;
  /** True when Keel requested the device and must destroy it. */
  readonly owned: boolean;
  /** The GPU object it came from (kept reachable while the device lives: Dawn needs its instance). */
  readonly gpu: GPU | undefined;
}

/** The limits Keel asks at the adapter's best values (WebGPU's defaults are more conservative). */
const RAISED_LIMITS = [
  'maxBufferSize',
  'maxStorageBufferBindingSize',
  'maxStorageBuffersPerShaderStage',
  'maxBindingsPerBindGroup',
  'maxUniformBufferBindingSize',
  'maxComputeWorkgroupsPerDimension',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupSizeY',
  'maxComputeWorkgroupSizeZ',
  'maxComputeWorkgroupStorageSize',
  // Alignments: lower is better; the adapter's own values are always allowed.
  'minStorageBufferOffsetAlignment',
  'minUniformBufferOffsetAlignment',
] as const;

/** An UNAVAILABLE KeelError (with `cause` when given). */
export function unavailable(message: string, cause?: unknown): KeelError {
  return new KeelError(ErrorCode.UNAVAILABLE, message, cause === undefined ? undefined : { cause });
}

/** `navigator.gpu` where there is one (browsers, Deno, Node with the globals installed). */
export function navigatorGpu(): GPU | undefined {
  return (globalThis as { navigator?: { gpu?: GPU } }).navigator?.gpu;
}

function requiredLimits(adapter: GPUAdapter): Record<string, number> {
  const limits: Record<string, number> = {};
  const supported = adapter.limits as unknown as Record<string, number | undefined>;
  for (const name of RAISED_LIMITS) {
    const value = supported[name];
    if (typeof value === 'number') limits[name] = value;
  }
  return limits;
}

/** The GPUDevice Keel will run on; UNAVAILABLE when there is no WebGPU or no adapter. */
export async function acquireGpuDevice(options: WebGpuDeviceOptions): Promise<AcquiredGpuDevice> {
  if (options.device !== undefined) {
    return { device: options.device, adapterInfo: options.device.adapterInfo, owned: false, gpu: undefined };
  }
  let adapter = options.adapter;
  let gpu: GPU | undefined;
  if (adapter === undefined) {
    gpu = navigatorGpu();
    if (gpu === undefined) {
      if (!HAS_DAWN) {
        throw unavailable('createWebGpuDevice: this environment has no WebGPU (navigator.gpu is undefined)');
      }
      gpu = await loadDawn(dawnFlags(options.dawnOptions ?? []));
    }
    const found = await gpu.requestAdapter(options.adapterOptions);
    if (found === null) {
      throw unavailable('createWebGpuDevice: no WebGPU adapter is available (requestAdapter returned null)');
    }
    adapter = found;
  }
  // timestamp-query is requested whenever the adapter has it: traces time dispatches with it.
  const wanted = [...(options.requiredFeatures ?? []), 'timestamp-query'];
  const features = [...new Set(wanted)].filter((f): f is GPUFeatureName => adapter.features.has(f));
  let device: GPUDevice;
  try {
    device = await adapter.requestDevice({
      requiredLimits: requiredLimits(adapter),
      requiredFeatures: features,
      label: options.label ?? 'keel',
    });
  } catch (cause) {
    throw unavailable('createWebGpuDevice: the adapter refused to create a device', cause);
  }
  return { device, adapterInfo: adapter.info, owned: true, gpu };
}
