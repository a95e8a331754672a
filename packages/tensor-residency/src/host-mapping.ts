/**
 * The optional device capability that pinned host tensors need: a synchronous host view of a
 * host-visible buffer. hal has no mapping API yet; this package defines the capability and detects it
 * at run time, so a device opts in by adding one method (see README, "Pinned memory").
 *
 * A device has the capability when it implements `mapHostView`. Devices whose buffers are plain host
 * memory (the CPU device: ArrayBuffer/SharedArrayBuffer slabs) can implement it in a few lines; devices
 * whose host-visible memory is only mapped asynchronously (WebGPU's `mapAsync`) do not, and pinned
 * tensors there fall back to ordinary host memory and an ordinary (staged) upload.
 */
import { ErrorCode, KeelError } from '@keel/fence';
import type { Buffer, Device } from '@keel/hal';

/**
 * Synchronous host views of host-visible buffers.
 *
 * Contract of `mapHostView(buffer)`:
 * - `buffer` was created by this device with `MemoryType.HOST_VISIBLE` and `BufferUsage.MAPPING`
 *   (INVALID_ARGUMENT otherwise) and is live (FAILED_PRECONDITION otherwise);
 * - it returns a Uint8Array of exactly `buffer.byteLength` bytes that aliases the buffer's memory
 *   (`byteOffset` a multiple of 8), valid until the buffer is destroyed; host writes through it are seen
 *   by queue operations that start after them, and bytes written by a queue operation are visible
 *   through it once that operation's signal fence is reached (HOST_COHERENT: no flush or invalidate);
 * - it never blocks and never copies. Ordering host access against queue operations is the caller's
 *   job (fences).
 */
export interface HostMapping {
  mapHostView(buffer: Buffer): Uint8Array;
}

/** A device that also implements HostMapping. */
export type HostMappableDevice = Device & HostMapping;

/** True when `device` implements the HostMapping capability. */
export function isHostMappable(device: Device): device is HostMappableDevice {
  return typeof (device as Partial<HostMapping>).mapHostView === 'function';
}

/**
 * The mapping to use for `device`: `override` when given (an adapter supplied by the application),
 * else the device itself when it implements the capability, else undefined (no pinned memory).
 */
export function hostMappingOf(device: Device, override?: HostMapping): HostMapping | undefined {
  if (override !== undefined) {
    if (typeof override !== 'object' || override === null || typeof override.mapHostView !== 'function') {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        'residency manager: hostMapping must be an object with a mapHostView(buffer) method',
      );
    }
    return override;
  }
  return isHostMappable(device) ? device : undefined;
}

/** Checks what a mapping returned for `buffer`; INTERNAL when the device broke the contract. */
export function checkMappedView(view: unknown, buffer: Buffer, what: string): Uint8Array {
  if (!(view instanceof Uint8Array) || view.byteLength !== buffer.byteLength || view.byteOffset % 8 !== 0) {
    throw new KeelError(
      ErrorCode.INTERNAL,
      `${what}: mapHostView must return a Uint8Array of the buffer's ${buffer.byteLength} bytes at an 8-byte aligned offset`,
    );
  }
  return view;
}
