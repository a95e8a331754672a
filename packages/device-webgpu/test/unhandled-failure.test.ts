/**
 * Issue 17 on the WebGPU device: a failure no signal timepoint can deliver (no signal fence, values
 * already passed) goes to `onUnhandledFailure(error, { device, operation })`, GPU errors included;
 * default: one console warning per device. The option is checked at creation. (The device-independent
 * rules run in the conformance suite: @keel/cts's 'failure.unhandled-reported'.) Skipped with the
 * reason where there is no adapter, failing under CI.
 */
import { ErrorCode, Fence, KeelError, TimelineSemaphore } from '@keel/fence';
import { BufferUsage, QueueAffinity, type UnhandledFailureContext } from '@keel/hal';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createWebGpuDevice, type WebGpuDevice, type WebGpuDeviceOptions } from '../src/index';
import { probeWebGpu } from './webgpu-probe';

const probe = await probeWebGpu();
const Q0 = QueueAffinity.of(0);

const FIXED_SIZE_WGSL = /* wgsl */ `
@group(0) @binding(0) var<storage, read_write> a: array<vec4<u32>, 4>;
@compute @workgroup_size(1) fn main() { a[0] = vec4<u32>(1u); }
`;

const devices: WebGpuDevice[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(devices.splice(0).map((d) => d.destroy()));
});

async function device(options: WebGpuDeviceOptions = {}): Promise<WebGpuDevice> {
  const d = await createWebGpuDevice(options);
  devices.push(d);
  return d;
}

/** Resolves once `done()` holds (polling; fails after 10 s), then lets stragglers arrive. */
async function until(done: () => boolean): Promise<void> {
  for (let waited = 0; !done(); waited += 5) {
    if (waited > 10_000) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await new Promise((resolve) => setTimeout(resolve, 50));
}

describe('@keel/device-webgpu onUnhandledFailure option', () => {
  it('must be a function (INVALID_ARGUMENT naming the option, before any GPU work)', async () => {
    const error = await createWebGpuDevice({ onUnhandledFailure: 'warn' } as never).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(KeelError.is(error, ErrorCode.INVALID_ARGUMENT)).toBe(true);
    expect((error as KeelError).message).toMatch(/'onUnhandledFailure' must be a function/);
  });
});

describe.skipIf(!probe.available)(
  `@keel/device-webgpu undeliverable failures${probe.available ? '' : ` (${probe.reason})`}`,
  () => {
    it('reports a GPU validation error of an execute without a signal fence, or whose value passed', async () => {
      const seen: [KeelError, UnhandledFailureContext][] = [];
      const d = await device({ onUnhandledFailure: (error, context) => seen.push([error, context]) });
      const fixed = await d.createExecutable({
        format: 'wgsl',
        label: 'fixed',
        code: FIXED_SIZE_WGSL,
        exports: [{ name: 'main', bindingCount: 1, constantCount: 0, workgroupSize: [1, 1, 1] }],
      });
      // The kernel needs 64 bytes; a 16-byte binding fails WebGPU validation at submit.
      const small = d.createBuffer({ byteLength: 16, usage: BufferUsage.DEFAULT });
      const record = () => {
        const cb = d.createCommandBuffer();
        cb.begin();
        cb.dispatch(fixed, 0, { workgroupCount: [1, 1, 1], bindings: [{ buffer: small }] });
        cb.end();
        return cb;
      };
      const passed = new TimelineSemaphore(5);
      d.queueExecute(Q0, Fence.empty, Fence.empty, [record()]);
      d.queueExecute(Q0, Fence.empty, Fence.of({ semaphore: passed, value: 2 }), [record()]);
      // Delivered: not reported.
      const s = new TimelineSemaphore();
      d.queueExecute(Q0, Fence.empty, Fence.of({ semaphore: s, value: 1 }), [record()]);
      await expect(s.wait(1, { timeoutMs: 10_000 })).rejects.toBeDefined();
      await until(() => seen.length >= 2);
      expect(seen.length).toBe(2);
      for (const [error, context] of seen) {
        expect(KeelError.is(error, ErrorCode.INVALID_ARGUMENT)).toBe(true);
        expect(error.message).toMatch(/queueExecute: failed WebGPU validation/);
        expect(context).toEqual({ device: d.name, operation: `${d.name} queueExecute` });
        expect(d.name).toMatch(/^webgpu device '/);
      }
    });

    it('by default warns once per device', async () => {
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
      const relevant = () =>
        warn.mock.calls.filter((call) =>
          /failed but no signal timepoint could deliver it/.test(`${call[0]}`),
        );
      const d = await device();
      for (let i = 0; i < 3; i++) {
        d.queueHostCall(Q0, Fence.empty, Fence.empty, () => {
          throw new Error(`host call ${i} exploded`);
        });
      }
      await until(() => relevant().length >= 1);
      expect(relevant().length).toBe(1);
      expect(`${relevant()[0]?.[0]}`).toMatch(/queueHostCall failed .*host call 0 exploded/);
      // Another device warns on its own.
      const other = await device();
      other.queueHostCall(Q0, Fence.empty, Fence.empty, () => {
        throw new Error('other device exploded');
      });
      await until(() => relevant().length >= 2);
      expect(relevant().length).toBe(2);
    });
  },
);
