/**
 * Injected faults below the devices: waits aborted mid-wait (on every backend's semaphores, on fences,
 * waitAll and waitAny: CANCELLED, nothing left behind, no listener warning), and the allocator under a
 * slab provider that throws and under a budget (RESOURCE_EXHAUSTED, no hang, no lost bytes, every
 * pending signal settled by destroy).
 */
import { getEventListeners } from 'node:events';
import {
  type Allocation,
  type Pool,
  QueueAllocator,
  RingPool,
  type SlabProvider,
  TlsfPool,
} from '@keel/allocator';
import {
  ErrorCode,
  Fence,
  KeelError,
  type Semaphore,
  TimelineSemaphore,
  waitAll,
  waitAny,
} from '@keel/fence';
import { describe, expect, it } from 'vitest';
import { backends, title } from './backends';
import {
  bounded,
  expectBytes,
  expectCode,
  failOnUncapturedGpuErrors,
  HANG_MS,
  outcome,
  pattern,
  Q0,
  STORAGE,
  single,
  watchProcess,
} from './helpers';

const all = await backends();
failOnUncapturedGpuErrors();

/** Settles `promise` (bounded) and returns the rejection, or 'resolved'. */
async function rejection(promise: Promise<unknown>, what: string): Promise<unknown> {
  try {
    await bounded(promise, what);
    return 'resolved';
  } catch (error) {
    return error;
  }
}

describe.each(all)('abort mid-wait on $name', (backend) => {
  describe.skipIf(!backend.available)(title(backend), () => {
    it('1 000 waits sharing one AbortSignal all reject CANCELLED; no listener, waiter or warning is left', async () => {
      const device = await backend.create();
      try {
        const sem = device.createSemaphore(0);
        const controller = new AbortController();
        const { result, warnings } = await watchProcess(async () => {
          const waits: Promise<unknown>[] = [];
          for (let i = 0; i < 1000; i++) {
            waits.push(rejection(sem.wait(1 + (i % 5), { signal: controller.signal }), `wait ${i}`));
          }
          const reason = new Error('injected abort');
          controller.abort(reason);
          return { errors: await Promise.all(waits), reason };
        });
        for (const [i, error] of result.errors.entries()) {
          expectCode(error, ErrorCode.CANCELLED, `wait ${i}`);
          expect((error as KeelError).cause).toBe(result.reason);
        }
        expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning');
        expect(sem.pendingWaitCount).toBe(0);
        expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
        // The semaphore still works.
        sem.signal(5);
        expect(await outcome(sem, 5)).toBe('ok');
      } finally {
        await bounded(device.destroy(), 'destroy');
      }
    });

    it("aborting the wait on an operation's signal cancels the wait, not the operation", async () => {
      const device = await backend.create();
      try {
        const data = device.createBuffer({ byteLength: 64, usage: STORAGE });
        const gate = new TimelineSemaphore(0, { label: 'gate' });
        const s = single(device);
        device.queueFill(Q0, Fence.of({ semaphore: gate, value: 1 }), s.fence, { buffer: data }, 0x5a, 1);
        const controller = new AbortController();
        const aborted = rejection(s.fence.wait({ signal: controller.signal }), 'aborted fence wait');
        controller.abort();
        expectCode(await aborted, ErrorCode.CANCELLED, 'aborted fence wait');
        expect(s.semaphore.pendingWaitCount).toBe(0);
        expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
        gate.signal(1);
        expect(await outcome(s.semaphore, 1, 'fill after the aborted wait')).toBe('ok');
        const out = new Uint8Array(64);
        const r = single(device);
        device.queueRead(Q0, s.fence, r.fence, { buffer: data }, out);
        expect(await outcome(r.semaphore, 1, 'read')).toBe('ok');
        expectBytes(out, new Uint8Array(64).fill(0x5a), 'filled bytes');
      } finally {
        await bounded(device.destroy(), 'destroy');
      }
    });
  });
});

describe('abort mid-wait on fences, waitAll and waitAny', () => {
  it('every form rejects CANCELLED with the reason and leaves nothing registered', async () => {
    const a = new TimelineSemaphore(0, { label: 'a' });
    const b = new TimelineSemaphore(0, { label: 'b' });
    const f = Fence.of({ semaphore: a, value: 1 }, { semaphore: b, value: 2 });
    const g = Fence.of({ semaphore: b, value: 3 });
    const controller = new AbortController();
    const reason = new Error('injected abort');
    const waits = [
      rejection(f.wait({ signal: controller.signal, timeoutMs: HANG_MS }), 'fence.wait'),
      rejection(waitAll([f, g], { signal: controller.signal }), 'waitAll'),
      rejection(waitAny([f, g], { signal: controller.signal }), 'waitAny'),
    ];
    a.signal(1); // partly reached: the waits stay pending
    controller.abort(reason);
    for (const [i, error] of (await Promise.all(waits)).entries()) {
      expectCode(error, ErrorCode.CANCELLED, `form ${i}`);
      expect((error as KeelError).cause).toBe(reason);
    }
    expect(a.pendingWaitCount).toBe(0);
    expect(b.pendingWaitCount).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});

/** A slab provider that throws once it has made `limit` slabs (or always, after `failAll()`). */
class FlakyProvider implements SlabProvider<ArrayBuffer> {
  created = 0;
  destroyed = 0;
  constructor(private readonly limit: number) {}
  createSlab(byteLength: number): ArrayBuffer {
    if (this.created >= this.limit) throw new Error(`injected slab fault: no slab of ${byteLength} bytes`);
    this.created++;
    return new ArrayBuffer(byteLength);
  }
  destroySlab(_memory: ArrayBuffer): void {
    this.destroyed++;
  }
}

function bytesOf(allocation: Allocation<ArrayBuffer>): Uint8Array {
  const block = allocation.block;
  if (block === undefined) throw new Error(`allocation ${allocation.state} has no block`);
  return new Uint8Array(block.slab.memory, block.offset, block.byteLength);
}

/** Calls `alloca`, returning the thrown error instead of throwing. */
function tryAlloca(
  allocator: QueueAllocator<ArrayBuffer>,
  signal: Fence,
  byteLength: number,
): Allocation<ArrayBuffer> | KeelError | unknown {
  try {
    return allocator.alloca(1, Fence.empty, signal, byteLength);
  } catch (error) {
    return error;
  }
}

describe.each([
  ['TlsfPool', (p: SlabProvider<ArrayBuffer>): Pool<ArrayBuffer> => new TlsfPool(p, { slabSize: 64 << 10 })],
  ['RingPool', (p: SlabProvider<ArrayBuffer>): Pool<ArrayBuffer> => new RingPool(p, { capacity: 64 << 10 })],
] as const)(
  'allocator faults: a slab provider that throws under a QueueAllocator over %s',
  (_name, makePool) => {
    it('the failing growth is a KeelError or a queued request that is served later; nothing hangs or is lost', async () => {
      const provider = new FlakyProvider(1);
      const errors: unknown[] = [];
      const allocator = new QueueAllocator(makePool(provider), { onError: (e) => errors.push(e) });
      const t = new TimelineSemaphore(0, { label: 't' });
      const at = (v: number) => Fence.of({ semaphore: t, value: v });
      const a = allocator.alloca(1, Fence.empty, at(1), 48 << 10);
      expect(await outcome(t, 1, 'first alloca')).toBe('ok');
      const bytes = pattern(48 << 10, 8);
      bytesOf(a).set(bytes);
      // Needs a second slab: the provider throws.
      const u = new TimelineSemaphore(0, { label: 'u' });
      const b = tryAlloca(allocator, Fence.of({ semaphore: u, value: 1 }), 48 << 10);
      expectBytes(bytesOf(a), bytes, 'bytes of the live allocation');
      if (KeelError.is(b)) {
        expectCode(b, ErrorCode.RESOURCE_EXHAUSTED, 'alloca whose growth failed');
        expect(u.value).toBe(0);
        expect(u.failure).toBeUndefined();
      } else {
        expect(b, 'alloca either throws a KeelError or returns an allocation').toHaveProperty('state');
      }
      // Memory comes back: the queued request (or a new one) is served by reuse.
      allocator.dealloca(1, at(1), at(2), a);
      expect(await outcome(t, 2, 'dealloca')).toBe('ok');
      if (KeelError.is(b)) {
        const c = allocator.alloca(1, Fence.empty, Fence.of({ semaphore: u, value: 1 }), 48 << 10);
        expect(await outcome(u, 1, 'alloca after the dealloca')).toBe('ok');
        expect(c.state).toBe('live');
      } else {
        expect(await outcome(u, 1, 'queued alloca')).toBe('ok');
        expect((b as Allocation<ArrayBuffer>).state).toBe('live');
      }
      expect(errors).toEqual([]);
      allocator.destroy();
      expect(provider.destroyed).toBe(provider.created);
    });

    it('a provider that always throws: every alloca is a KeelError or settles; destroy settles the rest UNAVAILABLE', async () => {
      const provider = new FlakyProvider(0);
      const allocator = new QueueAllocator(makePool(provider), { onError: () => {} });
      const signals: Semaphore[] = [];
      for (let i = 0; i < 10; i++) {
        const s = new TimelineSemaphore(0, { label: `s${i}` });
        const r = tryAlloca(allocator, Fence.of({ semaphore: s, value: 1 }), 1024 * (i + 1));
        if (KeelError.is(r)) expectCode(r, ErrorCode.RESOURCE_EXHAUSTED, `alloca ${i}`);
        else if (r instanceof Error) throw r;
        else signals.push(s);
      }
      allocator.destroy();
      for (const [i, s] of signals.entries()) {
        const o = await outcome(s, 1, `queued alloca ${i}`);
        expect(o).not.toBe('ok');
        expectCode(o, ErrorCode.UNAVAILABLE, `queued alloca ${i}`);
      }
      expect(provider.created).toBe(0);
    });
  },
);

describe('allocator faults: allocation beyond the budget', () => {
  it('a request larger than the budget throws RESOURCE_EXHAUSTED and signals nothing; others wait for memory', async () => {
    const provider = new FlakyProvider(1_000);
    const allocator = new QueueAllocator(new TlsfPool(provider, { slabSize: 256 << 10, budget: 1 << 20 }));
    const s = new TimelineSemaphore(0, { label: 's' });
    const r = tryAlloca(allocator, Fence.of({ semaphore: s, value: 1 }), 2 << 20);
    expectCode(r, ErrorCode.RESOURCE_EXHAUSTED, 'alloca beyond the budget');
    expect(s.value).toBe(0);
    expect(s.failure).toBeUndefined();
    const t = new TimelineSemaphore(0, { label: 't' });
    const at = (v: number) => Fence.of({ semaphore: t, value: v });
    const held: Allocation<ArrayBuffer>[] = [];
    for (let i = 0; i < 4; i++) held.push(allocator.alloca(1, Fence.empty, at(i + 1), 200 << 10));
    expect(await outcome(t, 4, 'allocas within the budget')).toBe('ok');
    held.forEach((a, i) => {
      bytesOf(a).set(pattern(200 << 10, i));
    });
    const u = new TimelineSemaphore(0, { label: 'u' });
    const waiting = allocator.alloca(2, Fence.empty, Fence.of({ semaphore: u, value: 1 }), 600 << 10);
    held.forEach((a, i) => {
      expectBytes(bytesOf(a), pattern(200 << 10, i), `allocation ${i}`);
    });
    for (const [i, a] of held.entries()) allocator.dealloca(1, at(4 + i), at(5 + i), a);
    expect(await outcome(t, 8, 'deallocas')).toBe('ok');
    expect(await outcome(u, 1, 'the waiting request')).toBe('ok');
    expect(waiting.state).toBe('live');
    allocator.destroy();
  });
});
