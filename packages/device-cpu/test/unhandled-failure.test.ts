/**
 * Issue 17: a failure no signal timepoint can deliver (its values already passed, or no signal fence)
 * is reported through `onUnhandledFailure(error, context)` (default: one console warning per device),
 * never dropped silently; task-mode kernel failures keep the kernel's error (name, message, stack) as
 * their cause across the worker thread.
 */
import { Fence, KeelError } from '@keel/fence';
import { BufferUsage, type Executable, type UnhandledFailureContext } from '@keel/hal';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type CpuDevice,
  type CpuDeviceMode,
  type CpuDeviceOptions,
  createCpuDevice,
} from '../dist/node/index.js';

const KERNELS = new URL('./fixtures/device-kernels.js', import.meta.url);
const devices: CpuDevice[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(devices.splice(0).map((d) => d.destroy()));
});

function device(mode: CpuDeviceMode, options: CpuDeviceOptions = {}): CpuDevice {
  const d = createCpuDevice({ mode, queues: 1, workersPerQueue: 1, ...options });
  devices.push(d);
  return d;
}

async function throwingCommandBuffer(d: CpuDevice) {
  const exe: Executable = await d.createExecutable({
    format: 'js-module',
    url: KERNELS,
    label: 'k',
    exports: [{ name: 'throws', bindingCount: 1, constantCount: 1 }],
  });
  const out = d.createBuffer({ byteLength: 64, usage: BufferUsage.DEFAULT });
  return () => {
    const cb = d.createCommandBuffer();
    cb.begin();
    cb.dispatch(exe, 'throws', { workgroupCount: [2, 1, 1], constants: [0], bindings: [{ buffer: out }] });
    cb.end();
    return cb;
  };
}

const settle = async (d: CpuDevice): Promise<void> => {
  // A barrier after the failing work on the same queue; in task mode executes complete in order.
  const s = d.createSemaphore(0);
  d.queueBarrier(1, Fence.empty, Fence.of({ semaphore: s, value: 1 }));
  await s.wait(1, { timeoutMs: 5000 });
  await new Promise((resolve) => setTimeout(resolve, 50));
};

describe.each(['sync', 'task'] as const)('device-cpu %s: undeliverable failures', (mode) => {
  it('reports a kernel failure whose signal value already passed, and one without a signal', async () => {
    const seen: [KeelError, UnhandledFailureContext][] = [];
    const d = device(mode, { onUnhandledFailure: (error, context) => seen.push([error, context]) });
    const make = await throwingCommandBuffer(d);
    const passed = d.createSemaphore(5);
    d.queueExecute(1, Fence.empty, Fence.of({ semaphore: passed, value: 3 }), [make()]);
    d.queueExecute(1, Fence.empty, Fence.empty, [make()]);
    await settle(d);
    expect(seen.length).toBe(2);
    for (const [error, context] of seen) {
      expect(KeelError.is(error, 'INTERNAL')).toBe(true);
      expect(error.message).toContain('kernel exploded at workgroup 0');
      expect(context.operation).toBe("device 'cpu' queueExecute");
      expect(context.device).toBe("device 'cpu'");
      // The kernel's error crosses the worker thread as the cause, with its stack.
      const cause = error.cause as Error;
      expect(cause).toBeInstanceOf(Error);
      expect(cause.message).toBe('kernel exploded at workgroup 0');
      expect(cause.stack).toContain('device-kernels.js');
    }
  });

  it('does not report failures a pending timepoint delivers, nor ABORTED propagation', async () => {
    const onUnhandledFailure = vi.fn();
    const d = device(mode, { onUnhandledFailure });
    const make = await throwingCommandBuffer(d);
    const s = d.createSemaphore(0);
    d.queueExecute(1, Fence.empty, Fence.of({ semaphore: s, value: 1 }), [make()]);
    // Waits on the failed timepoint: fails ABORTED, with no signal of its own.
    d.queueBarrier(1, Fence.of({ semaphore: s, value: 1 }), Fence.empty);
    await expect(s.wait(1, { timeoutMs: 5000 })).rejects.toBeDefined();
    await settle(d);
    expect(onUnhandledFailure).not.toHaveBeenCalled();
    expect((s.failure?.cause as Error | undefined)?.stack).toContain('device-kernels.js');
  });

  it('by default warns once per device', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const d = device(mode);
    const make = await throwingCommandBuffer(d);
    d.queueExecute(1, Fence.empty, Fence.empty, [make()]);
    d.queueExecute(1, Fence.empty, Fence.empty, [make()]);
    await settle(d);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]?.[0])).toMatch(
      /queueExecute failed but no signal timepoint could deliver it/,
    );
  });
});
