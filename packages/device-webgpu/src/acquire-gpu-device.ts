/**
 * Where the GPUDevice comes from: the caller's, else one requested from `navigator.gpu` (browsers, Deno,
 * Node with globals installed), else, in Node, from the optional `webgpu` package (Dawn), loaded with a
 * dynamic import only then, so bundles for browsers never pull it in.
 */
import { ErrorCode, KeelError } from '@keel/fence';
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

/** The shape of the `webgpu` package's exports that Keel uses. */
interface DawnModule {
  create(options: string[]): GPU;
  globals: Record<string, unknown>;
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

export function isNode(): boolean {
  const p = (globalThis as { process?: { versions?: { node?: string } } }).process;
  return typeof p?.versions?.node === 'string';
}

/**
 * Dawn's flags: the caller's, plus `disable-dawn-features=timestamp_quantization` unless the caller
 * names that feature in a `disable-`/`enable-dawn-features` flag. Dawn rounds GPU timestamps down to
 * 65 536 ns by default (a browser's defence against timing attacks), which would make per-dispatch
 * times of traces useless for kernels of a few µs; a Node process has no cross-origin code to defend
 * against.
 */
export function dawnFlags(options: readonly string[]): string[] {
  if (options.some((o) => o.includes('timestamp_quantization'))) return [...options];
  const disable = options.findIndex((o) => o.startsWith('disable-dawn-features='));
  if (disable < 0) return [...options, 'disable-dawn-features=timestamp_quantization'];
  const flags = [...options];
  flags[disable] = `${flags[disable]},timestamp_quantization`;
  return flags;
}

/**
 * Loads Dawn through the `webgpu` package (Node only). Its globals (GPUBufferUsage, ...) are installed
 * where absent, so application code that uses them works as in a browser.
 */
export async function loadDawn(options: readonly string[]): Promise<GPU> {
  // A computed specifier keeps bundlers (vite, esbuild) from resolving the Node-only package.
  const specifier = ['web', 'gpu'].join('');
  let mod: DawnModule;
  try {
    mod = (await import(/* @vite-ignore */ specifier)) as DawnModule;
  } catch (cause) {
    throw unavailable(
      "createWebGpuDevice: no navigator.gpu and the optional 'webgpu' package (Dawn for Node) could not be loaded; install it or pass a GPUDevice",
      cause,
    );
  }
  const g = globalThis as Record<string, unknown>;
  for (const [name, value] of Object.entries(mod.globals)) if (g[name] === undefined) g[name] = value;
  return mod.create([...options]);
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
      if (!isNode()) {
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
