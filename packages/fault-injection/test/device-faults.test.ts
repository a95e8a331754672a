/**
 * Injected faults at the device layer, on every backend: kernels that throw or reject, a worker that
 * exits mid-dispatch, a GPUDevice destroyed under a running queue, allocation beyond a budget, a failed
 * wait feeding 100 chained submissions, destroy with 1 000 pending operations. Each time: every waiter
 * settles with a documented code (bounded waits: a hang fails the test), bytes written by completed
 * operations survive, and a new device opens afterwards and works.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { WebGpuDevice } from '@keel/device-webgpu';
import { ErrorCode, Fence, KeelError, type Semaphore, TimelineSemaphore } from '@keel/fence';
import { type Buffer, type Device, type Executable, type ExportDescriptor, QueueAffinity } from '@keel/hal';
import { describe, expect, it } from 'vitest';
import { ADD_CONST, backends, KERNELS, title } from './backends';
import {
  bounded,
  expectAbortedBy,
  expectBytes,
  expectCode,
  expectFreshDeviceWorks,
  failOnUncapturedGpuErrors,
  type Outcome,
  outcome,
  pattern,
  Q0,
  Q1,
  readBytes,
  STORAGE,
  single,
  watchProcess,
  writeBytes,
} from './helpers';

const run = promisify(execFile);
const all = await backends();
failOnUncapturedGpuErrors();
const cpuBackends = all.filter((b) => b.name !== 'webgpu');

const FAULT_EXPORTS: ExportDescriptor[] = [
  ADD_CONST,
  { name: 'throws', bindingCount: 0, constantCount: 0 },
  { name: 'rejects', bindingCount: 0, constantCount: 0 },
  { name: 'write_after_await', bindingCount: 1, constantCount: 1 },
  { name: 'exit', bindingCount: 0, constantCount: 0 },
];

function faultKernels(device: Device): Promise<Executable> {
  return device.createExecutable({
    format: 'js-module',
    url: KERNELS,
    exports: FAULT_EXPORTS,
    label: 'faults',
  });
}

/** Submits one dispatch of `entry` (one-shot command buffer) and returns its signal semaphore. */
function dispatch(
  device: Device,
  exe: Executable,
  entry: string,
  count: number,
  constants: number[],
  bindings: Buffer[],
  wait: Fence = Fence.empty,
): Semaphore {
  const cb = device.createCommandBuffer();
  cb.begin();
  cb.dispatch(exe, entry, {
    workgroupCount: [count, 1, 1],
    constants,
    bindings: bindings.map((buffer) => ({ buffer })),
  });
  cb.end();
  const s = single(device);
  device.queueExecute(Q0, wait, s.fence, [cb]);
  return s.semaphore;
}

/** 'lost' when `device.lost` has resolved, else 'alive' (checked after a macrotask). */
async function lostState(device: Device): Promise<'lost' | 'alive'> {
  let lost = false;
  void device.lost.then(() => {
    lost = true;
  });
  await new Promise((resolve) => setTimeout(resolve, 0));
  return lost ? 'lost' : 'alive';
}

/** True once `cause` (or a link of its ABORTED chain) is UNAVAILABLE. */
function rootIsUnavailable(error: KeelError): boolean {
  let link: unknown = error;
  for (let i = 0; i < 200 && KeelError.is(link); i++) {
    if (link.code === ErrorCode.UNAVAILABLE) return true;
    if (link.code !== ErrorCode.ABORTED) return false;
    link = link.cause;
  }
  return false;
}

describe.each(cpuBackends)('kernel faults on $name', (backend) => {
  it('a kernel that throws fails its signal INTERNAL naming the kernel; the device carries on', async () => {
    const device = await backend.create();
    try {
      const exe = await faultKernels(device);
      const data = device.createBuffer({ byteLength: 256, usage: STORAGE });
      const bytes = pattern(256, 1);
      await writeBytes(device, data, bytes);
      const failed = await outcome(dispatch(device, exe, 'throws', 2, [], []), 1, 'throwing dispatch');
      expect(failed).not.toBe('ok');
      expectCode(failed, ErrorCode.INTERNAL, 'throwing dispatch');
      expect(failed.message).toContain('throws');
      expect(failed.message).toContain('injected kernel fault: throws');
      expect(await readBytes(device, data)).toEqual(bytes);
      // The device is not lost: the next dispatch runs.
      const next = await outcome(dispatch(device, exe, 'add_const', 1, [1, 4], [data]), 1, 'next dispatch');
      expect(next).toBe('ok');
      expect(await lostState(device)).toBe('alive');
    } finally {
      await bounded(device.destroy(), 'destroy');
    }
    await expectFreshDeviceWorks(() => backend.create());
  });

  it('a kernel that returns a rejected promise fails its signal INTERNAL; no unhandled rejection, device alive', async () => {
    const device = await backend.create();
    try {
      const exe = await faultKernels(device);
      const data = device.createBuffer({ byteLength: 256, usage: STORAGE });
      const bytes = pattern(256, 2);
      await writeBytes(device, data, bytes);
      const { result: failed, unhandled } = await watchProcess(() =>
        outcome(dispatch(device, exe, 'rejects', 2, [], []), 1, 'rejecting dispatch'),
      );
      expect(unhandled, 'unhandled rejections / uncaught exceptions').toEqual([]);
      expect(failed).not.toBe('ok');
      expectCode(failed, ErrorCode.INTERNAL, 'rejecting dispatch');
      expect(failed.message).toContain('injected kernel fault: rejects');
      expect(await lostState(device)).toBe('alive');
      expect(await readBytes(device, data)).toEqual(bytes);
      const next = await outcome(dispatch(device, exe, 'add_const', 1, [1, 4], [data]), 1, 'next dispatch');
      expect(next).toBe('ok');
    } finally {
      await bounded(device.destroy(), 'destroy');
    }
    await expectFreshDeviceWorks(() => backend.create());
  });

  it("an async kernel's writes after an await are seen by the operation its signal orders", async () => {
    const device = await backend.create();
    try {
      const exe = await faultKernels(device);
      const data = device.createBuffer({ byteLength: 64, usage: STORAGE });
      const s = dispatch(device, exe, 'write_after_await', 4, [0xabc], [data]);
      const out = new Uint32Array(4);
      const r = single(device);
      device.queueRead(Q0, Fence.of({ semaphore: s, value: 1 }), r.fence, { buffer: data, length: 16 }, out);
      expect(await outcome(r.semaphore, 1, 'read after async kernel')).toBe('ok');
      expect(Array.from(out)).toEqual([0xabc, 0xabc, 0xabc, 0xabc]);
    } finally {
      await bounded(device.destroy(), 'destroy');
    }
  });
});

describe.each(cpuBackends.filter((b) => b.name === 'cpu-task'))('worker faults on $name', (backend) => {
  it('a worker that exits mid-dispatch loses the device with UNAVAILABLE and fails every pending signal', async () => {
    const device = await backend.create();
    const exe = await faultKernels(device);
    const data = device.createBuffer({ byteLength: 256, usage: STORAGE });
    const bytes = pattern(256, 3);
    await writeBytes(device, data, bytes);
    const kept = await readBytes(device, data); // completed before the fault: must stay as read
    // Pending work: waits on a host semaphore nobody signals, on both queues.
    const gate = new TimelineSemaphore(0, { label: 'gate' });
    const gated = Fence.of({ semaphore: gate, value: 1 });
    const pending: Semaphore[] = [];
    for (let i = 0; i < 6; i++) {
      const s = single(device);
      const q = i % 2 === 0 ? Q0 : Q1;
      if (i % 3 === 0) device.queueFill(q, gated, s.fence, { buffer: data }, i, 4);
      else if (i % 3 === 1) device.queueBarrier(q, gated, s.fence);
      else device.queueRead(q, gated, s.fence, { buffer: data }, new Uint8Array(256));
      pending.push(s.semaphore);
    }
    const exiting = dispatch(device, exe, 'exit', 1, [], []);
    const reason = await bounded(device.lost, 'device.lost after a worker exit');
    expectCode(reason, ErrorCode.UNAVAILABLE, 'lost reason');
    const exited = await outcome(exiting, 1, 'exiting dispatch');
    expect(exited).not.toBe('ok');
    expectCode(exited, ErrorCode.UNAVAILABLE, 'exiting dispatch');
    for (const [i, s] of pending.entries()) {
      const o = await outcome(s, 1, `pending operation ${i}`);
      expect(o).not.toBe('ok');
      expectCode(o, ErrorCode.UNAVAILABLE, `pending operation ${i}`);
    }
    expect(() => device.createBuffer({ byteLength: 16, usage: STORAGE })).toThrow(
      expect.objectContaining({ code: ErrorCode.UNAVAILABLE }),
    );
    expect(kept).toEqual(bytes);
    await bounded(device.destroy(), 'destroy after loss');
    expect((device as { liveWorkers?: number }).liveWorkers).toBe(0);
    await expectFreshDeviceWorks(() => backend.create());
  });
});

describe.each(all)('device faults on $name', (backend) => {
  describe.skipIf(!backend.available)(title(backend), () => {
    it('allocation beyond the budget is RESOURCE_EXHAUSTED at the call; within it, a request waits for memory', async () => {
      const budget = 1 << 20;
      const { device, pool } = await backend.createBudgeted(budget);
      try {
        const s = single(device);
        let thrown: unknown;
        try {
          device.queueAlloca(Q0, Fence.empty, s.fence, { usage: STORAGE }, 2 * budget, { pool });
        } catch (error) {
          thrown = error;
        }
        expectCode(thrown, ErrorCode.RESOURCE_EXHAUSTED, 'alloca beyond the budget');
        expect(s.semaphore.value).toBe(0);
        expect(s.semaphore.failure).toBeUndefined();
        // Two 640 KiB allocations: the second fits only once the first is deallocated.
        const t = device.createSemaphore(0);
        const at = (v: number) => Fence.of({ semaphore: t, value: v });
        const a = device.queueAlloca(Q0, Fence.empty, at(1), { usage: STORAGE }, 640 << 10, { pool });
        const bytes = pattern(640 << 10, 4);
        device.queueWrite(Q0, at(1), at(2), bytes, { buffer: a });
        const out = new Uint8Array(640 << 10);
        device.queueRead(Q0, at(2), at(3), { buffer: a }, out);
        const u = device.createSemaphore(0);
        const b = device.queueAlloca(
          Q1,
          Fence.empty,
          Fence.of({ semaphore: u, value: 1 }),
          { usage: STORAGE },
          640 << 10,
          {
            pool,
          },
        );
        device.queueDealloca(Q0, at(3), at(4), a);
        expect(await outcome(t, 4, 'first allocation chain')).toBe('ok');
        expectBytes(out, bytes, 'read of the first allocation');
        expect(await outcome(u, 1, 'second allocation')).toBe('ok');
        device.queueDealloca(
          Q1,
          Fence.of({ semaphore: u, value: 1 }),
          Fence.of({ semaphore: u, value: 2 }),
          b,
        );
        expect(await outcome(u, 2, 'second dealloca')).toBe('ok');
      } finally {
        await bounded(device.destroy(), 'destroy');
      }
      await expectFreshDeviceWorks(() => backend.create());
    });

    it('operations whose signal timepoint something else already passed leave it alone; nothing is thrown later', async () => {
      const device = await backend.create();
      try {
        const data = device.createBuffer({ byteLength: 256, usage: STORAGE });
        const { unhandled } = await watchProcess(async () => {
          const ahead = device.createSemaphore(0);
          ahead.signal(5);
          const passed = Fence.of({ semaphore: ahead, value: 1 });
          const ops: (() => unknown)[] = [
            () => device.queueAlloca(Q0, Fence.empty, passed, { usage: STORAGE }, 256),
            () => device.queueFill(Q0, Fence.empty, passed, { buffer: data }, 1, 4),
            () => device.queueBarrier(Q0, Fence.empty, passed),
            () => device.queueUpdate(Q0, Fence.empty, passed, new Uint8Array(16), { buffer: data }),
            () => device.queueRead(Q0, Fence.empty, passed, { buffer: data }, new Uint8Array(256)),
          ];
          for (const op of ops) {
            try {
              op();
            } catch (error) {
              expect(KeelError.is(error), `a raw error: ${String(error)}`).toBe(true);
            }
          }
          // Everything issued has run once a later operation on a fresh semaphore completes after them.
          await writeBytes(device, data, pattern(256, 11));
          await readBytes(device, data);
        });
        expect(unhandled, 'uncaught exceptions / unhandled rejections').toEqual([]);
      } finally {
        await bounded(device.destroy(), 'destroy');
      }
    });

    it('a deferred queueWrite whose source is detached before it runs fails its signal and writes nothing', async () => {
      const device = await backend.create();
      try {
        const data = device.createBuffer({ byteLength: 256, usage: STORAGE });
        const bytes = pattern(256, 12);
        await writeBytes(device, data, bytes);
        const gate = new TimelineSemaphore(0, { label: 'gate' });
        const source = new Uint8Array(256).fill(0xee);
        const s = single(device);
        device.queueWrite(Q0, Fence.of({ semaphore: gate, value: 1 }), s.fence, source, { buffer: data });
        structuredClone(source.buffer, { transfer: [source.buffer] }); // detaches the source
        expect(source.byteLength).toBe(0);
        gate.signal(1);
        const o = await outcome(s.semaphore, 1, 'write of a detached source');
        expect(o, 'a write whose source was detached cannot succeed').not.toBe('ok');
        expect(KeelError.is(o)).toBe(true);
        expectBytes(await readBytes(device, data), bytes, 'bytes after the failed write');
      } finally {
        await bounded(device.destroy(), 'destroy');
      }
    });

    it('a failed wait feeding 100 chained submissions fails all 100 signals ABORTED with the original as root cause', async () => {
      const device = await backend.create();
      try {
        const exe = await backend.addConst(device);
        const data = device.createBuffer({ byteLength: 1024, usage: STORAGE });
        const other = device.createBuffer({ byteLength: 1024, usage: STORAGE });
        const bytes = pattern(1024, 5);
        await writeBytes(device, data, bytes);
        const cb = device.createCommandBuffer({ mode: 'reusable', bindingCapacity: 1 });
        cb.begin();
        cb.dispatch(exe, 'add_const', { workload: [256], constants: [1, 256], bindings: [{ slot: 0 }] });
        cb.end();
        const root = new TimelineSemaphore(0, { label: 'root' });
        const chain: Semaphore[] = [];
        let wait = Fence.of({ semaphore: root, value: 1 });
        const host = new Uint8Array(1024);
        let hostCalls = 0;
        for (let i = 0; i < 100; i++) {
          const s = single(device);
          const q = i % 2 === 0 ? Q0 : Q1;
          switch (i % 8) {
            case 0:
              device.queueExecute(q, wait, s.fence, [cb], [[{ buffer: data }]]);
              break;
            case 1:
              device.queueFill(q, wait, s.fence, { buffer: data }, 0xdeadbeef, 4);
              break;
            case 2:
              device.queueCopy(q, wait, s.fence, { buffer: other }, { buffer: data });
              break;
            case 3:
              device.queueUpdate(q, wait, s.fence, new Uint8Array(64).fill(9), { buffer: data, offset: 64 });
              break;
            case 4:
              device.queueWrite(q, wait, s.fence, new Uint8Array(128).fill(7), { buffer: data, offset: 128 });
              break;
            case 5:
              device.queueRead(q, wait, s.fence, { buffer: data }, host);
              break;
            case 6:
              device.queueHostCall(q, wait, s.fence, () => {
                hostCalls++;
              });
              break;
            default:
              device.queueBarrier(q, wait, s.fence);
          }
          chain.push(s.semaphore);
          wait = s.fence;
        }
        const original = new KeelError(
          ErrorCode.DATA_LOSS,
          'injected: the producer of the root timepoint failed',
        );
        root.fail(original);
        for (const [i, s] of chain.entries()) {
          const o = await outcome(s, 1, `chained submission ${i}`);
          expect(o, `chained submission ${i}`).not.toBe('ok');
          expectAbortedBy(o, original, `chained submission ${i}`);
        }
        expect(hostCalls).toBe(0);
        expect(host).toEqual(new Uint8Array(1024));
        expect(await readBytes(device, data)).toEqual(bytes);
        expect(root.pendingWaitCount).toBe(0);
      } finally {
        await bounded(device.destroy(), 'destroy');
      }
    });

    it('destroy with 1 000 pending operations settles every one UNAVAILABLE and leaves nothing registered', async () => {
      const device = await backend.create();
      const data = device.createBuffer({ byteLength: 4096, usage: STORAGE });
      const bytes = pattern(4096, 6);
      await writeBytes(device, data, bytes);
      const kept = await readBytes(device, data);
      const gate = new TimelineSemaphore(0, { label: 'gate' });
      const signals: Semaphore[] = [];
      const chainSem = device.createSemaphore(0);
      let link = 0;
      for (let i = 0; i < 1000; i++) {
        const q = i % 2 === 0 ? Q0 : Q1;
        // Half wait on the gate directly, half are chained behind each other (chainSem 1..500).
        const direct = i % 2 === 0;
        const gated = Fence.of({ semaphore: gate, value: 1 });
        const wait = direct || link === 0 ? gated : gated.with(chainSem, link);
        if (!direct) link++;
        const signal = direct
          ? single(device)
          : { semaphore: chainSem, fence: Fence.of({ semaphore: chainSem, value: link }) };
        switch (i % 4) {
          case 0:
            device.queueFill(
              q,
              wait,
              signal.fence,
              { buffer: data, offset: (i % 64) * 64, length: 64 },
              i & 0xff,
              1,
            );
            break;
          case 1:
            device.queueBarrier(q, wait, signal.fence);
            break;
          case 2:
            device.queueUpdate(q, wait, signal.fence, new Uint8Array(16), { buffer: data });
            break;
          default:
            device.queueRead(q, wait, signal.fence, { buffer: data, length: 16 }, new Uint8Array(16));
        }
        if (direct) signals.push(signal.semaphore);
      }
      await bounded(device.destroy(), 'destroy with 1 000 pending operations');
      const reason = await bounded(device.lost, 'device.lost after destroy');
      expect(KeelError.is(reason)).toBe(true);
      for (const [i, s] of signals.entries()) {
        const o: Outcome = await outcome(s, 1, `pending operation ${2 * i}`);
        expect(o, `pending operation ${2 * i}`).not.toBe('ok');
        expectCode(o, ErrorCode.UNAVAILABLE, `pending operation ${2 * i}`);
      }
      const chained = await outcome(chainSem, 500, 'chained pending operations');
      expect(chained).not.toBe('ok');
      expect(rootIsUnavailable(chained as KeelError), (chained as KeelError).message).toBe(true);
      expect(gate.pendingWaitCount, 'registrations left on the caller semaphore').toBe(0);
      expect(() => device.createBuffer({ byteLength: 16, usage: STORAGE })).toThrow(
        expect.objectContaining({ code: ErrorCode.FAILED_PRECONDITION }),
      );
      expect(kept).toEqual(bytes);
      await expectFreshDeviceWorks(() => backend.create());
    });
  });
});

describe.each(all.filter((b) => b.name === 'webgpu'))('GPU faults on $name', (backend) => {
  describe.skipIf(!backend.available)(title(backend), () => {
    it('queueWrite, its signal awaited, then destroy() at once and a GC, 20 times: the process exits cleanly', async () => {
      const script = fileURLToPath(new URL('./fixtures/destroy-after-write.mjs', import.meta.url));
      let result: { code: number | string | null; signal: string | null; stdout: string; stderr: string };
      try {
        const { stdout, stderr } = await run(process.execPath, ['--expose-gc', script, '20'], {
          timeout: 60_000,
          killSignal: 'SIGKILL',
        });
        result = { code: 0, signal: null, stdout, stderr };
      } catch (error) {
        const e = error as { code?: number | string; signal?: string; stdout?: string; stderr?: string };
        result = {
          code: e.code ?? null,
          signal: e.signal ?? null,
          stdout: e.stdout ?? '',
          stderr: e.stderr ?? '',
        };
      }
      const summary = `exit ${result.code}, signal ${result.signal} (SIGKILL = hang past 60 s); stderr: ${result.stderr.slice(-600)}`;
      expect(result.signal, summary).toBeNull();
      expect(result.code, summary).toBe(0);
      expect(result.stdout).toContain('ok 20');
    }, 90_000);

    it('a GPUDevice destroyed under a running queue fails every unfinished signal UNAVAILABLE', async () => {
      const device = (await backend.create()) as WebGpuDevice;
      const exe = await backend.addConst(device);
      const data = device.createBuffer({ byteLength: 4096, usage: STORAGE });
      const bytes = pattern(4096, 7);
      await writeBytes(device, data, bytes);
      const kept = await readBytes(device, data);
      const cb = device.createCommandBuffer({ mode: 'reusable', bindingCapacity: 1 });
      cb.begin();
      cb.dispatch(exe, 'add_const', { workload: [1024], constants: [1, 1024], bindings: [{ slot: 0 }] });
      cb.end();
      const t = device.createSemaphore(0);
      const at = (v: number) => (v === 0 ? Fence.empty : Fence.of({ semaphore: t, value: v }));
      const reads: { value: number; out: Uint8Array }[] = [];
      let v = 0;
      for (let i = 0; i < 30; i++) {
        if (i % 3 === 0) device.queueExecute(QueueAffinity.ANY, at(v), at(v + 1), [cb], [[{ buffer: data }]]);
        else if (i % 3 === 1)
          device.queueWrite(QueueAffinity.ANY, at(v), at(v + 1), pattern(512, i), { buffer: data });
        else {
          const out = new Uint8Array(4096);
          device.queueRead(QueueAffinity.ANY, at(v), at(v + 1), { buffer: data }, out);
          reads.push({ value: v + 1, out });
        }
        v++;
      }
      const gate = new TimelineSemaphore(0, { label: 'gate' });
      const deferred = single(device);
      device.queueFill(
        QueueAffinity.ANY,
        Fence.of({ semaphore: gate, value: 1 }),
        deferred.fence,
        { buffer: data },
        1,
        4,
      );
      device.gpuDevice.destroy();
      const reason = await bounded(device.lost, 'device.lost after GPUDevice.destroy()');
      expectCode(reason, ErrorCode.UNAVAILABLE, 'lost reason');
      const last = await outcome(t, v, 'the chain');
      if (last !== 'ok') expect(rootIsUnavailable(last), last.message).toBe(true);
      const d = await outcome(deferred.semaphore, 1, 'deferred fill');
      expect(d).not.toBe('ok');
      expectCode(d, ErrorCode.UNAVAILABLE, 'deferred fill');
      expect(() => device.createBuffer({ byteLength: 16, usage: STORAGE })).toThrow(
        expect.objectContaining({ code: ErrorCode.UNAVAILABLE }),
      );
      expect(kept).toEqual(bytes);
      await bounded(device.destroy(), 'destroy after loss');
      expect(gate.pendingWaitCount).toBe(0);
      await expectFreshDeviceWorks(() => backend.create());
    });
  });
});
