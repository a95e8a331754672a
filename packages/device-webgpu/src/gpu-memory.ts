/**
 * GPU memory as Keel's WebGPU device sees it: a GPUBuffer with an id that is never reused, so that
 * caches can key bind groups on (id, offset, size) with plain numbers (a destroyed GPUBuffer's id is
 * never seen again, so stale cache entries are never hit, only evicted).
 */
import type { KeelError } from '@keel/fence';
import { invalid } from '@keel/hal/driver';
import { DEVICE_MEMORY_USAGE } from './gpu-flags';

export interface GpuMemory {
  /** Unique in this realm; never reused. */
  readonly id: number;
  readonly buffer: GPUBuffer;
  /** The GPUBuffer's size in bytes (a multiple of 4). */
  readonly size: number;
  /**
   * The GPU error its creation raised (out of memory), once known (it arrives asynchronously): the
   * GPUBuffer is invalid, and operations on memory in it fail with this (set by gpu-slab-provider.ts).
   */
  failure: KeelError | undefined;
  /**
   * Its creation's own error scopes came back clean: the GPUBuffer is valid, so a `writeBuffer` into
   * it that Keel checked (range, alignment, not destroyed) cannot fail and needs no error scope.
   */
  proven: boolean;
}

let nextId = 1;

/** The size class of a staging buffer for `bytes`: a power of two, at least 256 (readback pool). */
export function stagingSize(bytes: number): number {
  let size = 256;
  while (size < bytes) size *= 2;
  return size;
}

/** Rounds `n` up to a multiple of `alignment` (a power of two). */
export function alignUp(n: number, alignment: number): number {
  return Math.ceil(n / alignment) * alignment;
}

/** Rounds `n` down to a multiple of `alignment` (a power of two). */
export function alignDown(n: number, alignment: number): number {
  return Math.floor(n / alignment) * alignment;
}

/**
 * The size of a GPUBuffer for `byteLength` bytes: rounded up to a multiple of 4, at least 4 (as WebGPU
 * buffers are). INVALID_ARGUMENT when that exceeds `maxBufferSize` (WebGPU's rule for createBuffer);
 * `what` names the object and its size (e.g. "createBuffer: byteLength").
 */
export function gpuBufferSize(byteLength: number, maxBufferSize: number, what: string): number {
  const size = Math.max(4, alignUp(byteLength, 4));
  if (size > maxBufferSize) {
    throw invalid(
      `${what} ${byteLength} rounds up to a GPUBuffer of ${size} bytes (a multiple of 4), above the device's maxBufferSize of ${maxBufferSize}`,
    );
  }
  return size;
}

/**
 * A new GPUBuffer of at least `byteLength` bytes (rounded up to 4, at least 4) with `usage` (by default
 * the usage every device buffer gets, DEVICE_MEMORY_USAGE). WebGPU zero-fills new buffers.
 */
export function createGpuMemory(
  device: GPUDevice,
  byteLength: number,
  label: string | undefined,
  usage: number = DEVICE_MEMORY_USAGE,
): GpuMemory {
  // Never handed to WebGPU when too large (it would print a validation error and return an invalid buffer).
  const size = gpuBufferSize(byteLength, device.limits.maxBufferSize, `${label ?? 'GPU memory'}: size`);
  const descriptor: GPUBufferDescriptor = label === undefined ? { size, usage } : { size, usage, label };
  return { id: nextId++, buffer: device.createBuffer(descriptor), size, failure: undefined, proven: false };
}
