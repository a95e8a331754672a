/**
 * Device-specific behaviour of @keel/device-cpu beyond the conformance suite: failures of kernels and
 * workers, loss, lifetime of worker threads, keeping the process alive, kernel ABI details. Imports the
 * built Node build (dist/node) so that task mode finds dist/node/worker.js.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Fence, KeelError } from '@keel/fence';
import { BufferUsage, type Executable, type ExportDescriptor } from '@keel/hal';
import { afterEach, describe, expect, it } from 'vitest';
import { type CpuDevice, type CpuDeviceMode, createCpuDevice } from '../dist/node/index.js';

const run = promisify(execFile);
const KERNELS = new URL('./fixtures/device-kernels.js', import.meta.url);
const STORAGE = BufferUsage.DEFAULT;

const EXPORTS: ExportDescriptor[] = [
  { name: 'throws', bindingCount: 1, constantCount: 1 },
  { name: 'exit', bindingCount: 0, constantCount: 0 },
  { name: 'crash', bindingCount: 0, constantCount: 0 },
  { name: 'busy', bindingCount: 0, constantCount: 1 },
  { name: 'worker_index', bindingCount: 1, constantCount: 1 },
  { name: 'worker_meet', bindingCount: 2, constantCount: 1 },
  { name: 'describe', bindingCount: 2, constantCount: 1, workgroupSize: [8, 4, 2] },
  { name: 'misaligned', bindingCount: 1, constantCount: 0 },
];

const devices: CpuDevice[] = [];
afterEach(async () => {
  await Promise.all(devices.splice(0).map((d) => d.destroy()));
});

function device(mode: CpuDeviceMode, queues = 1, workersPerQueue = 2): CpuDevice {
  const d = createCpuDevice({ mode, queues, workersPerQueue });
  devices.push(d);
  return d;
}

function kernels(d: CpuDevice): Promise<Executable> {
  return d.createExecutable({ format: 'js-module', url: KERNELS, exports: EXPORTS, label: 'device-kernels' });
}

/** Records one dispatch, submits it, and returns the signal semaphore's settlement. */
async function dispatch(
  d: CpuDevice,
  exe: Executable,
  entry: string,
  count: [number, number, number],
  constants: number[],
  bindings: { buffer: import('@keel/hal').Buffer; offset?: number; length?: number }[],
): Promise<KeelError | undefined> {
  const cb = d.createCommandBuffer();
  cb.begin();
  cb.dispatch(exe, entry, { workgroupCount: count, constants, bindings });
  cb.end();
  const s = d.createSemaphore(0);
  d.queueExecute(1, Fence.empty, Fence.of({ semaphore: s, value: 1 }), [cb]);
  try {
    await s.wait(1, { timeoutMs: 5000 });
    return undefined;
  } catch {
    return s.failure;
  }
}

async function read(d: CpuDevice, buffer: import('@keel/hal').Buffer): Promise<Uint32Array> {
  const out = new Uint32Array(buffer.byteLength / 4);
  const s = d.createSemaphore(0);
  d.queueRead(1, Fence.empty, Fence.of({ semaphore: s, value: 1 }), { buffer }, out);
  await s.wait(1, { timeoutMs: 5000 });
  return out;
}

describe.each(['sync', 'task'] as const)('device-cpu %s', (mode) => {
  it('reports its configuration in info', () => {
    const d = device(mode, 3, 1);
    expect(d.info.backend).toBe('cpu');
    expect(d.info.queueCount).toBe(3);
    expect(d.info.limits.maxUpdateSize).toBe(65536);
    expect(d.mode).toBe(mode);
  });

  it('a kernel that throws fails the signal with INTERNAL carrying the message; the queue keeps working', async () => {
    const d = device(mode);
    const exe = await kernels(d);
    const out = d.createBuffer({ byteLength: 64, usage: STORAGE });
    const failure = await dispatch(d, exe, 'throws', [8, 1, 1], [5], [{ buffer: out }]);
    expect(KeelError.is(failure, 'INTERNAL')).toBe(true);
    expect(failure?.message).toContain('kernel exploded at workgroup 5');
    expect(failure?.message).toContain("kernel 'throws'");
    // The same queue runs the next submission normally.
    expect(await dispatch(d, exe, 'throws', [4, 1, 1], [99], [{ buffer: out }])).toBeUndefined();
    expect(Array.from((await read(d, out)).slice(0, 4))).toEqual([1, 1, 1, 1]);
  });

  it('gives kernels views of exactly their binding range, the workgroup size and the constants', async () => {
    const d = device(mode);
    const exe = await kernels(d);
    const out = d.createBuffer({ byteLength: 64, usage: STORAGE });
    const data = d.createBuffer({ byteLength: 256, usage: STORAGE });
    const s = d.createSemaphore(0);
    d.queueFill(
      1,
      Fence.empty,
      Fence.of({ semaphore: s, value: 1 }),
      { buffer: data, offset: 32, length: 4 },
      42,
      1,
    );
    await s.wait(1);
    const quarter = new Uint32Array(new Float32Array([0.25]).buffer)[0]!;
    const failure = await dispatch(
      d,
      exe,
      'describe',
      [1, 1, 1],
      [quarter],
      [{ buffer: out }, { buffer: data, offset: 32, length: 100 }],
    );
    expect(failure).toBeUndefined();
    expect(Array.from((await read(d, out)).slice(0, 9))).toEqual([100, 100, 25, 12, 42, 842, 1, 250, 2]);
  });

  it('a misaligned typed view fails the dispatch with a KeelError naming the binding', async () => {
    const d = device(mode);
    const exe = await kernels(d);
    const data = d.createBuffer({ byteLength: 64, usage: STORAGE });
    // Recorded through a slot so that the table's offset (2) is not subject to record-time alignment.
    const cb = d.createCommandBuffer({ bindingCapacity: 1, validation: false });
    cb.begin();
    cb.dispatch(exe, 'misaligned', { workgroupCount: [1, 1, 1], bindings: [{ slot: 0 }] });
    cb.end();
    const s = d.createSemaphore(0);
    d.queueExecute(
      1,
      Fence.empty,
      Fence.of({ semaphore: s, value: 1 }),
      [cb],
      [[{ buffer: data, offset: 2 }]],
    );
    await expect(s.wait(1, { timeoutMs: 5000 })).rejects.toThrow();
    expect(s.failure?.message).toContain('binding 0: offset');
  });

  it('rejects a module that does not load, a missing export and a non-js format', async () => {
    const d = device(mode);
    const missingModule = d.createExecutable({
      format: 'js-module',
      url: new URL('./fixtures/no-such-module.js', import.meta.url),
      exports: [{ name: 'x', bindingCount: 0, constantCount: 0 }],
    });
    await expect(missingModule).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    const missingExport = d.createExecutable({
      format: 'js-module',
      url: KERNELS,
      exports: [{ name: 'not_there', bindingCount: 0, constantCount: 0 }],
    });
    await expect(missingExport).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const wgsl = d.createExecutable({ format: 'wgsl', code: '', exports: EXPORTS });
    await expect(wgsl).rejects.toMatchObject({ code: 'UNIMPLEMENTED' });
    // The device still works.
    const exe = await kernels(d);
    expect(exe.exports.map((e) => e.name)).toContain('busy');
  });

  it('concurrent createExecutable calls get distinct executables', async () => {
    const d = device(mode);
    const [a, b] = await Promise.all([
      d.createExecutable({ format: 'js-module', url: KERNELS, exports: [EXPORTS[4]!], label: 'a' }),
      d.createExecutable({ format: 'js-module', url: KERNELS, exports: [EXPORTS[0]!], label: 'b' }),
    ]);
    expect(a).not.toBe(b);
    const out = d.createBuffer({ byteLength: 64, usage: STORAGE });
    expect(await dispatch(d, a, 'worker_index', [4, 1, 1], [0], [{ buffer: out }])).toBeUndefined();
    expect(await dispatch(d, b, 'throws', [4, 1, 1], [9], [{ buffer: out }])).toBeUndefined();
    expect(Array.from((await read(d, out)).slice(0, 4))).toEqual([1, 1, 1, 1]);
  });

  it('destroy resolves lost, fails pending work with UNAVAILABLE, and later calls are FAILED_PRECONDITION', async () => {
    const d = device(mode);
    const gate = d.createSemaphore(0);
    const s = d.createSemaphore(0);
    d.queueBarrier(1, Fence.of({ semaphore: gate, value: 1 }), Fence.of({ semaphore: s, value: 1 }));
    await d.destroy();
    expect(s.failure?.code).toBe('UNAVAILABLE');
    expect((await d.lost).code).toBe('UNAVAILABLE');
    expect(d.liveWorkers).toBe(0);
    expect(() => d.createBuffer({ byteLength: 4, usage: STORAGE })).toThrow(
      expect.objectContaining({ code: 'FAILED_PRECONDITION' }),
    );
  });
});

describe('device-cpu task mode', () => {
  it('is the default in Node (DESIGN.md § device-cpu: task mode is the default)', async () => {
    const d = createCpuDevice({ queues: 1 });
    devices.push(d);
    expect(d.mode).toBe('task');
    expect(d.info.features).toContain('mode:task');
    expect(d.info.features).toContain('shared-memory');
    expect(d.liveWorkers).toBe(d.workersPerQueue);
  });

  it('spreads the workgroups of one dispatch over the queue workers', async () => {
    const d = device('task', 1, 2);
    const exe = await kernels(d);
    const out = d.createBuffer({ byteLength: 4 * 32, usage: STORAGE });
    const control = d.createBuffer({ byteLength: 8, usage: STORAGE });
    // Each workgroup waits (until 3 s after the first, within the test's 5 s) until a second worker has
    // run one, so the check does not depend on how the machine schedules the two threads.
    const bindings = [{ buffer: out }, { buffer: control }];
    expect(await dispatch(d, exe, 'worker_meet', [8, 2, 2], [3000], bindings)).toBeUndefined();
    const seen = new Set(await read(d, out));
    expect(seen.has(0)).toBe(false); // every workgroup ran
    expect([...seen].sort()).toEqual([1, 2]); // both workers took some
    expect(Array.from(await read(d, control))).toEqual([0b11, 0]); // both marked it, nobody gave up
  });

  it('a worker that exits loses the device: pending work fails UNAVAILABLE and every worker ends', async () => {
    const d = device('task', 2, 2);
    const exe = await kernels(d);
    const gate = d.createSemaphore(0);
    const pending = d.createSemaphore(0);
    d.queueBarrier(2, Fence.of({ semaphore: gate, value: 1 }), Fence.of({ semaphore: pending, value: 1 }));
    const failure = await dispatch(d, exe, 'exit', [1, 1, 1], [], []);
    expect(failure?.code).toBe('UNAVAILABLE');
    const reason = await d.lost;
    expect(reason.code).toBe('UNAVAILABLE');
    expect(reason.message).toMatch(/worker \d of queue 0 exited with code 3/);
    expect(d.lostReason).toBe(reason);
    expect(pending.failure?.code).toBe('UNAVAILABLE');
    expect(() => d.queueBarrier(1, Fence.empty, Fence.empty)).toThrow(
      expect.objectContaining({ code: 'UNAVAILABLE' }),
    );
    await d.destroy();
    expect(d.lostReason).toBe(reason); // the loss, not the later destroy
    expect(d.liveWorkers).toBe(0);
  });

  it('a worker that exits fails pending and queued allocas and deallocas with the loss; none succeeds later', async () => {
    const d = device('task', 2, 1);
    const exe = await kernels(d);
    const gate = d.createSemaphore(0);
    const allocated = d.createSemaphore(0);
    const released = d.createSemaphore(0);
    const at = (semaphore: typeof gate, value: number) => Fence.of({ semaphore, value });
    // An alloca waiting on the host, and a dealloca waiting on the host for a live allocation.
    d.queueAlloca(1, at(gate, 1), at(allocated, 1), { usage: STORAGE }, 64);
    const live = d.queueAlloca(1, Fence.empty, Fence.empty, { usage: STORAGE }, 64);
    d.queueDealloca(1, at(gate, 1), at(released, 1), live);
    const failure = await dispatch(d, exe, 'exit', [1, 1, 1], [], []);
    expect(failure?.code).toBe('UNAVAILABLE');
    const reason = await d.lost;
    await expect(allocated.wait(1, { timeoutMs: 2000 })).rejects.toMatchObject({ code: 'ABORTED' });
    expect(allocated.failure).toBe(reason);
    await expect(released.wait(1, { timeoutMs: 2000 })).rejects.toMatchObject({ code: 'ABORTED' });
    expect(released.failure).toBe(reason);
    gate.signal(1);
    await new Promise((r) => setTimeout(r, 10));
    expect(allocated.value).toBe(0);
    await d.destroy();
  });

  it("ignores a kernel's own messages to the parent thread (progress, null, look-alikes of its protocol)", async () => {
    const d = device('task', 1, 1);
    const exe = await d.createExecutable({
      format: 'js-module',
      url: new URL('./fixtures/chatty-kernels.js', import.meta.url),
      exports: [{ name: 'chatty', bindingCount: 1, constantCount: 0 }],
    });
    const out = d.createBuffer({ byteLength: 16, usage: STORAGE });
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.prependListener('uncaughtException', onUncaught);
    try {
      for (let i = 0; i < 3; i++) {
        expect(await dispatch(d, exe, 'chatty', [4, 1, 1], [], [{ buffer: out }])).toBeUndefined();
      }
      expect(Array.from(await read(d, out))).toEqual([1, 2, 3, 4]);
      await new Promise((r) => setTimeout(r, 20));
    } finally {
      process.removeListener('uncaughtException', onUncaught);
    }
    expect(uncaught).toEqual([]);
    expect(d.liveWorkers).toBe(1);
  });

  it('an uncaught exception in a worker (outside a kernel call) loses the device', async () => {
    const d = device('task', 1, 1);
    const exe = await kernels(d);
    expect(await dispatch(d, exe, 'crash', [1, 1, 1], [], [])).toBeUndefined();
    const reason = await d.lost;
    expect(reason.code).toBe('UNAVAILABLE');
    expect(reason.message).toContain('uncaught in a worker');
  });

  it('destroy ends every worker thread', async () => {
    const d = device('task', 3, 2);
    expect(d.liveWorkers).toBe(6);
    await kernels(d);
    await d.destroy();
    expect(d.liveWorkers).toBe(0);
  });

  it('destroy ends the workers so that the process exits by itself', async () => {
    const script = fileURLToPath(new URL('./fixtures/destroy-exits.mjs', import.meta.url));
    const { stdout } = await run(process.execPath, [script], { timeout: 20_000 });
    expect(stdout.trim()).toBe('4 0');
  });
});

describe.each(['sync', 'task'] as const)('device-cpu %s keeps the process alive', (mode) => {
  it('while submitted work is pending, then lets it exit', async () => {
    const script = fileURLToPath(new URL('./fixtures/keep-alive.mjs', import.meta.url));
    const { stdout } = await run(process.execPath, [script, mode], { timeout: 20_000 });
    const lines = stdout.trim().split('\n');
    // Sync mode runs the work inside queueExecute; task mode finishes it after the module returned.
    expect(lines).toEqual(mode === 'sync' ? ['done', 'submitted'] : ['submitted', 'done']);
  });
});
