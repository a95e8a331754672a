/**
 * The whole conformance suite against the null device (null-device.ts): a device built only on the
 * driver kit's narrow surface passes it.
 */
import { describe, expect, it } from 'vitest';
import { CTS_CASES, defineDeviceConformance, runConformanceCases } from '../src/index';
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

describe('runConformanceCases (no test runner)', () => {
  const handle = (options?: { onUnhandledFailure?: never }) => ({
    device: new NullDevice('runner', options?.onUnhandledFailure),
    kernels: (kernel: string, exports: readonly never[]) => ({
      format: 'js-module' as const,
      url: KERNELS_URL,
      exports,
      label: `cts ${kernel}`,
    }),
  });

  it('runs every case in both ref modes and reports each outcome', async () => {
    const outcomes = await runConformanceCases(handle as never);
    const expected = CTS_CASES.reduce((n, c) => n + (c.recordsCommands ? 2 : 1), 0);
    expect(outcomes.length).toBe(expected);
    expect(outcomes.filter((o) => !o.ok)).toEqual([]);
  });

  it('reports a failing case with its error instead of throwing', async () => {
    const failing = {
      ...CTS_CASES[0]!,
      run: async () => {
        throw new Error('broken on purpose');
      },
    };
    const outcomes = await runConformanceCases(handle as never, { cases: [failing] });
    expect(outcomes).toHaveLength(failing.recordsCommands ? 2 : 1);
    expect(outcomes[0]).toMatchObject({ ok: false, error: 'broken on purpose' });
  });
});
