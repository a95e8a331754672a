/**
 * The whole conformance suite against the null device (null-device.ts): a device built only on the
 * driver kit's narrow surface passes it.
 */
import { describe, expect, it } from 'vitest';
import { defineDeviceConformance } from '../src/index';
import { NullDevice } from './null-device';

const KERNELS_URL = new URL('./fixtures/null-kernels.js', import.meta.url);

defineDeviceConformance('null device (driver kit only)', (options) => ({
  device: new NullDevice('null', options?.onUnhandledFailure),
  kernels: (kernel, exports) => ({ format: 'js-module', url: KERNELS_URL, exports, label: `cts ${kernel}` }),
}));

describe('null device', () => {
  it('names itself in the queue front messages', () => {
    const device = new NullDevice('proof');
    expect(() => device.flush(0)).toThrow(/null device 'proof' flush/);
  });
});
