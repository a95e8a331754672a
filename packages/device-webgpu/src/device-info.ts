/**
 * DeviceInfo of the WebGPU device: the adapter's name and the device's limits mapped onto Keel's.
 */
import type { DeviceInfo, DeviceLimits } from '@keel/hal';

/** Most 32-bit constants one dispatch takes (256 bytes of uniform data, as IREE's push constants). */
export const MAX_CONSTANTS = 64;
/** Bytes of the uniform window every dispatch with constants binds. */
export const CONSTANTS_WINDOW_BYTES = MAX_CONSTANTS * 4;
/** The largest `update` payload (Keel's contract). */
export const MAX_UPDATE_SIZE = 65536;

/**
 * A readable adapter name: "device (description)" when the adapter gives both (e.g. "nvidia-h200
 * (NVIDIA: 580.159.04 580.159.4.0)": the description is often only the driver), else whichever it
 * gives, else vendor and architecture (e.g. Chromium's "google swiftshader").
 */
export function adapterName(info: GPUAdapterInfo | undefined): string {
  if (info === undefined) return 'WebGPU adapter';
  const device = (info.device ?? '').replace(/-+$/, '');
  const description = info.description ?? '';
  if (device && description) return description.includes(device) ? description : `${device} (${description})`;
  if (device || description) return device || description;
  const parts = [info.vendor, info.architecture].filter((s) => typeof s === 'string' && s.length > 0);
  return parts.length > 0 ? parts.join(' ') : 'WebGPU adapter';
}

/** Keel's limits for a GPUDevice's limits. */
export function deviceLimits(limits: GPUSupportedLimits): DeviceLimits {
  const groups = limits.maxComputeWorkgroupsPerDimension;
  return {
    maxBufferSize: limits.maxBufferSize,
    maxWorkgroupCount: [groups, groups, groups],
    maxBindings: Math.min(limits.maxStorageBuffersPerShaderStage, limits.maxBindingsPerBindGroup),
    maxConstants: MAX_CONSTANTS,
    minStorageBufferOffsetAlignment: Math.max(4, limits.minStorageBufferOffsetAlignment),
    maxUpdateSize: MAX_UPDATE_SIZE,
  };
}

/**
 * The feature a WebGPU device reports when its adapter runs on the CPU (Mesa lavapipe/llvmpipe,
 * SwiftShader, or any adapter that says it is a fallback or 'software' architecture). Kernels tuned for
 * GPUs are often the wrong shape there (arithmetic runs on a few CPU cores), so kernel authors read it.
 */
export const SOFTWARE_ADAPTER_FEATURE = 'software-adapter';

/** True for adapters that run on the CPU (see SOFTWARE_ADAPTER_FEATURE). */
export function isSoftwareAdapter(info: GPUAdapterInfo | undefined): boolean {
  if (info === undefined) return false;
  const fallback = (info as GPUAdapterInfo & { isFallbackAdapter?: boolean }).isFallbackAdapter === true;
  const text = `${info.vendor ?? ''} ${info.architecture ?? ''} ${info.device ?? ''} ${info.description ?? ''}`;
  return fallback || info.architecture === 'software' || /llvmpipe|lavapipe|swiftshader/i.test(text);
}

/** The DeviceInfo of a WebGPU device. */
export function deviceInfo(
  device: GPUDevice,
  adapterInfo: GPUAdapterInfo | undefined,
  queueCount: number,
): DeviceInfo {
  return Object.freeze({
    backend: 'webgpu',
    name: adapterName(adapterInfo),
    queueCount,
    limits: Object.freeze(deviceLimits(device.limits)),
    features: Object.freeze(
      [
        ...[...device.features].map(String),
        ...(isSoftwareAdapter(adapterInfo) ? [SOFTWARE_ADAPTER_FEATURE] : []),
      ].sort(),
    ),
  });
}
