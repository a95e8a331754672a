/**
 * `createDevice`: one call that opens a Keel device of either kind. The CPU device needs nothing; the
 * WebGPU device needs `navigator.gpu` (browsers) or the optional `webgpu` package (Node).
 */
import type { CpuDeviceOptions } from '@keel/device-cpu';
import { createCpuDevice } from '@keel/device-cpu';
import type { WebGpuDeviceOptions } from '@keel/device-webgpu';
import { createWebGpuDevice } from '@keel/device-webgpu';
import { type Device, describeValue, ErrorCode, KeelError } from '@keel/hal';

export type DeviceKind = 'cpu' | 'webgpu';

export type CreateDeviceOptions =
  | ({ readonly kind?: 'cpu' } & CpuDeviceOptions)
  | ({ readonly kind: 'webgpu' } & WebGpuDeviceOptions);

/**
 * Opens a device: `{ kind: 'cpu', mode, queues, workersPerQueue }` (the default) or
 * `{ kind: 'webgpu', ... }`. The caller owns the device and ends it with `destroy()` or `await using`.
 * Errors: UNAVAILABLE when WebGPU has no adapter here; INVALID_ARGUMENT for bad options (not an
 * object, an unknown `kind`, and whatever the chosen device's factory refuses: unknown keys, wrong
 * types, out-of-range numbers).
 */
export async function createDevice(options: CreateDeviceOptions = {}): Promise<Device> {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new KeelError(
      ErrorCode.INVALID_ARGUMENT,
      `createDevice: options must be an object { kind?: 'cpu' | 'webgpu', ... }, got ${describeValue(options)}`,
    );
  }
  const kind: unknown = options.kind;
  if (kind !== undefined && kind !== 'cpu' && kind !== 'webgpu') {
    throw new KeelError(
      ErrorCode.INVALID_ARGUMENT,
      `createDevice: option 'kind' must be one of 'cpu', 'webgpu', got ${describeValue(kind)}`,
    );
  }
  if (options.kind === 'webgpu') {
    const { kind: _kind, ...rest } = options;
    return createWebGpuDevice(rest);
  }
  const { kind: _kind, ...rest } = options;
  return createCpuDevice(rest);
}
