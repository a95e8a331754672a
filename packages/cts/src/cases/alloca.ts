/**
 * Queue-ordered allocation: basic, chained, many cycles, cross-queue, failed dealloca, reuse of a pending
 * dealloca's memory, use after free.
 */
import { Fence, type Semaphore } from '@keel/fence';
import { type Buffer, BufferUsage, type Device, ErrorCode, KeelError, QueueAffinity } from '@keel/hal';
import {
  causedBy,
  check,
  checkArrayEqual,
  checkEqual,
  expectKeelError,
  expectRejection,
} from '../assertions';
import { defineCase } from '../case';
import type { CtsContext } from '../context';

const params = { usage: BufferUsage.DEFAULT };

const RING = { pool: 'ring' } as const;

/**
 * The capacity of `device`'s 'ring' pool (its reserved bytes while a small ring alloca is live; the
 * alloca is deallocated again before this returns), or undefined when the device has no ring pool or
 * no `allocatorStats()`.
 */
async function ringCapacity(device: Device, timeoutMs: number): Promise<number | undefined> {
  if (device.allocatorStats === undefined) return undefined;
  const q = QueueAffinity.of(0);
  const s = device.createSemaphore(0);
  let probe: Buffer;
  try {
    probe = device.queueAlloca(q, Fence.empty, Fence.of({ semaphore: s, value: 1 }), params, 16, RING);
  } catch (error) {
    if (KeelError.is(error, ErrorCode.INVALID_ARGUMENT)) return undefined;
    throw error;
  }
  const capacity = device.allocatorStats().get('ring')?.reservedBytes;
  device.queueDealloca(q, Fence.of({ semaphore: s, value: 1 }), Fence.of({ semaphore: s, value: 2 }), probe);
  await s.wait(2, { timeoutMs });
  await new Promise((resolve) => setTimeout(resolve, 0));
  return capacity;
}

/** Lets deallocas whose frontier was just reached return their memory. */
async function settle(_ctx: CtsContext): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 0));
}

export const allocaCases = [
  defineCase({
    id: 'alloca.stats',
    title: "allocatorStats(), where a device has it, maps each used pool to hal's one stats shape",
    tags: ['alloca'],
    recordsCommands: false,
    async run(ctx) {
      const stats = ctx.device.allocatorStats?.bind(ctx.device);
      if (stats === undefined) return; // optional in the Device contract
      const before = stats().get('tlsf')?.allocas ?? 0;
      const s = ctx.semaphore();
      const q = ctx.queue(0);
      const at = (v: number) => Fence.of({ semaphore: s, value: v });
      const buffer = ctx.device.queueAlloca(q, Fence.empty, at(1), params, 64, { pool: 'tlsf' });
      ctx.device.queueDealloca(q, at(1), at(2), buffer);
      await s.wait(2, { timeoutMs: ctx.timeoutMs });
      const map = stats();
      check(map instanceof Map, 'allocatorStats() returns a Map');
      const tlsf = map.get('tlsf');
      check(tlsf !== undefined, "allocatorStats() has the 'tlsf' pool after an alloca from it");
      checkEqual(tlsf!.allocas - before, 1, 'allocas counted');
      for (const key of [
        'deallocas',
        'failures',
        'liveBytes',
        'peakLiveBytes',
        'dyingBytes',
        'reservedBytes',
      ]) {
        check(
          typeof (tlsf as unknown as Record<string, unknown>)[key] === 'number',
          `stats.${key} is a number`,
        );
      }
      check(!map.has('ring') || map.get('ring')!.allocas >= 0, 'a ring entry has the same shape');
    },
  }),
  defineCase({
    id: 'alloca.basic',
    title: 'alloca → fill → read → dealloca',
    tags: ['alloca'],
    recordsCommands: false,
    async run(ctx) {
      const before = ctx.handle.heldQueueBytes?.();
      const s = ctx.semaphore();
      const q = ctx.queue(0);
      const at = (v: number) => Fence.of({ semaphore: s, value: v });
      const buffer = ctx.device.queueAlloca(q, Fence.empty, at(1), params, 256);
      checkEqual(buffer.byteLength, 256, 'byteLength');
      check(buffer.placement.queueAllocated, 'placement.queueAllocated');
      ctx.device.queueFill(q, at(1), at(2), { buffer }, 0x12345678, 4);
      const out = new Uint32Array(64);
      ctx.device.queueRead(q, at(2), at(3), { buffer }, out);
      ctx.device.queueDealloca(q, at(3), at(4), buffer);
      checkEqual(buffer.state, 'deallocated', 'state after queueDealloca');
      await s.wait(4, { timeoutMs: ctx.timeoutMs });
      checkArrayEqual(out, new Uint32Array(64).fill(0x12345678), 'read back');
      await settle(ctx);
      if (before !== undefined)
        checkEqual(ctx.handle.heldQueueBytes!(), before, 'held queue bytes after dealloca');
    },
  }),
  defineCase({
    id: 'alloca.placement',
    title:
      "a buffer's placement: queueAlloca's pool ('tlsf' by default, the one named) and affinity (params.affinity when given, else the alloca's queue); createBuffer's ANY (or params.affinity) and no pool",
    tags: ['alloca'],
    recordsCommands: false,
    async run(ctx) {
      const d = ctx.device;
      const s = ctx.semaphore();
      const q = ctx.queue(1);
      let v = 0;
      const at = (value: number) => Fence.of({ semaphore: s, value });
      const alloca = (p: typeof params & { affinity?: QueueAffinity }, pool?: string) => {
        const buffer = d.queueAlloca(q, at(v), at(v + 1), p, 64, pool === undefined ? undefined : { pool });
        v++;
        return buffer;
      };
      const allocated: Buffer[] = [];
      // params.affinity given: the placement is that mask, whatever queue ran the alloca.
      const mask = QueueAffinity.of(0, ctx.queueCount - 1);
      const named = alloca({ ...params, affinity: mask }, 'tlsf');
      allocated.push(named);
      checkEqual(
        named.placement.affinity,
        mask >>> 0,
        'placement.affinity of an alloca with params.affinity',
      );
      checkEqual(named.placement.pool, 'tlsf', "placement.pool of an alloca from pool 'tlsf'");
      check(named.placement.queueAllocated, 'placement.queueAllocated of an alloca');
      // No options: the default pool; no params.affinity: the placement holds the alloca's queue.
      const plain = alloca(params);
      allocated.push(plain);
      checkEqual(plain.placement.pool, 'tlsf', 'placement.pool of an alloca without options');
      const queueIndex = 1 % ctx.queueCount;
      check(
        QueueAffinity.has(plain.placement.affinity, queueIndex),
        `placement.affinity of an alloca on queue ${queueIndex} holds that queue: ${QueueAffinity.format(plain.placement.affinity)}`,
      );
      // Another pool, where the device has it ('passthrough' on both Keel devices): named in placement.
      let other: Buffer | undefined;
      try {
        other = alloca(params, 'passthrough');
      } catch (error) {
        check(
          KeelError.is(error, ErrorCode.INVALID_ARGUMENT),
          `an alloca from pool 'passthrough' allocates or is INVALID_ARGUMENT: ${String(error)}`,
        );
      }
      if (other !== undefined) {
        allocated.push(other);
        checkEqual(other.placement.pool, 'passthrough', "placement.pool of an alloca from 'passthrough'");
        check(other.placement.queueAllocated, "placement.queueAllocated of a 'passthrough' alloca");
      }
      // Device buffers: no pool, not queue-allocated, ANY unless params.affinity says otherwise.
      const device = ctx.buffer(64);
      checkEqual(device.placement.pool, undefined, 'placement.pool of a device buffer');
      checkEqual(device.placement.queueAllocated, false, 'placement.queueAllocated of a device buffer');
      checkEqual(device.placement.affinity, QueueAffinity.ANY, 'placement.affinity of a device buffer');
      const pinned = d.createBuffer({ byteLength: 64, usage: BufferUsage.DEFAULT, affinity: mask });
      ctx.defer(() => pinned.destroy());
      checkEqual(
        pinned.placement.affinity,
        mask >>> 0,
        'placement.affinity of a device buffer with params.affinity',
      );
      for (const buffer of allocated) {
        d.queueDealloca(q, at(v), at(v + 1), buffer);
        v++;
      }
      await s.wait(v, { timeoutMs: ctx.timeoutMs });
    },
  }),
  defineCase({
    id: 'alloca.chained',
    title: 'alloca → execute → read → dealloca chained by fences before anything runs',
    tags: ['alloca'],
    recordsCommands: true,
    async run(ctx) {
      const gate = ctx.semaphore();
      const s = ctx.semaphore();
      const q = ctx.queue(0);
      const at = (v: number) => Fence.of({ semaphore: s, value: v });
      const buffer = ctx.device.queueAlloca(q, Fence.of({ semaphore: gate, value: 1 }), at(1), params, 128);
      const b = ctx.binder();
      const cb = ctx.record();
      cb.fill(b.ref(buffer, 0, 64), 0xab, 1);
      cb.fill(b.ref(buffer, 64), 0xcd, 1);
      cb.end();
      ctx.device.queueExecute(q, at(1), at(2), [cb], [b.table()]);
      const out = new Uint8Array(128);
      ctx.device.queueRead(q, at(2), at(3), { buffer }, out);
      ctx.device.queueDealloca(q, at(3), at(4), buffer);
      checkEqual(s.value, 0, 'nothing ran before the gate');
      gate.signal(1);
      await s.wait(4, { timeoutMs: ctx.timeoutMs });
      const expected = new Uint8Array(128);
      expected.fill(0xab, 0, 64);
      expected.fill(0xcd, 64);
      checkArrayEqual(out, expected, 'read back');
    },
  }),
  defineCase({
    id: 'alloca.hundred-cycles',
    title: '100 alloca → fill → dealloca cycles on one timeline',
    tags: ['alloca', 'stress'],
    recordsCommands: false,
    async run(ctx) {
      const before = ctx.handle.heldQueueBytes?.();
      const s = ctx.semaphore();
      const q = ctx.queue(0);
      const at = (v: number) => Fence.of({ semaphore: s, value: v });
      const out = new Uint32Array(100);
      const sum = ctx.buffer(400);
      let v = 0;
      for (let i = 0; i < 100; i++) {
        const buffer = ctx.device.queueAlloca(q, at(v), at(v + 1), params, 1024 + 16 * (i % 7));
        ctx.device.queueFill(q, at(v + 1), at(v + 2), { buffer }, i, 4);
        ctx.device.queueCopy(
          q,
          at(v + 2),
          at(v + 3),
          { buffer, offset: 0, length: 4 },
          { buffer: sum, offset: 4 * i },
        );
        ctx.device.queueDealloca(q, at(v + 3), at(v + 4), buffer);
        v += 4;
      }
      ctx.device.queueRead(q, at(v), at(v + 1), { buffer: sum }, out);
      await s.wait(v + 1, { timeoutMs: ctx.timeoutMs });
      checkArrayEqual(
        out,
        Uint32Array.from({ length: 100 }, (_, i) => i),
        'values of each cycle',
      );
      await settle(ctx);
      if (before !== undefined)
        checkEqual(ctx.handle.heldQueueBytes!(), before, 'held queue bytes after 100 cycles');
    },
  }),
  defineCase({
    id: 'alloca.cross-queue',
    title: 'alloca on one queue, used on another, deallocated on the first',
    tags: ['alloca', 'multi-queue'],
    recordsCommands: true,
    async run(ctx) {
      const s = ctx.semaphore();
      const at = (v: number) => Fence.of({ semaphore: s, value: v });
      const buffer = ctx.device.queueAlloca(ctx.queue(0), Fence.empty, at(1), params, 256);
      const b = ctx.binder();
      const cb = ctx.record();
      cb.fill(b.ref(buffer), 0x0102, 2);
      cb.end();
      ctx.device.queueExecute(ctx.queue(1), at(1), at(2), [cb], [b.table()]);
      const out = new Uint16Array(128);
      ctx.device.queueRead(ctx.queue(1), at(2), at(3), { buffer }, out);
      ctx.device.queueDealloca(ctx.queue(0), at(3), at(4), buffer);
      await s.wait(4, { timeoutMs: ctx.timeoutMs });
      checkArrayEqual(out, new Uint16Array(128).fill(0x0102), 'read back on the other queue');
    },
  }),
  defineCase({
    id: 'alloca.failed-dealloca-wait',
    title: 'a dealloca whose wait fails fails its signal (ABORTED) and frees nothing',
    tags: ['alloca'],
    recordsCommands: false,
    async run(ctx) {
      const held = ctx.handle.heldQueueBytes;
      const before = held?.();
      const s = ctx.semaphore();
      const q = ctx.queue(0);
      const buffer = ctx.device.queueAlloca(
        q,
        Fence.empty,
        Fence.of({ semaphore: s, value: 1 }),
        params,
        4096,
      );
      await s.wait(1, { timeoutMs: ctx.timeoutMs });
      const w = ctx.semaphore();
      const d = ctx.semaphore();
      ctx.device.queueDealloca(
        q,
        Fence.of({ semaphore: w, value: 1 }),
        Fence.of({ semaphore: d, value: 1 }),
        buffer,
      );
      const cause = new KeelError(ErrorCode.INTERNAL, 'cts: the last user failed');
      w.fail(cause);
      let rejected = false;
      try {
        await d.wait(1, { timeoutMs: ctx.timeoutMs });
      } catch {
        rejected = true;
      }
      check(rejected, 'the dealloca signal failed');
      checkEqual(d.failure?.code, ErrorCode.ABORTED, 'dealloca signal failure code');
      check(causedBy(d.failure, cause), 'the dealloca failure carries the original cause');
      await settle(ctx);
      if (held !== undefined && before !== undefined) {
        const kept = held() - before;
        check(
          kept >= 4096,
          `the block stays held after the failed dealloca (held bytes grew by ${kept}, expected ≥ 4096)`,
        );
      }
      // The allocator keeps working.
      const t = ctx.semaphore();
      const at = (v: number) => Fence.of({ semaphore: t, value: v });
      const next = ctx.device.queueAlloca(q, Fence.empty, at(1), params, 4096);
      ctx.device.queueFill(q, at(1), at(2), { buffer: next }, 0xee, 1);
      const out = new Uint8Array(4096);
      ctx.device.queueRead(q, at(2), at(3), { buffer: next }, out);
      ctx.device.queueDealloca(q, at(3), at(4), next);
      await t.wait(4, { timeoutMs: ctx.timeoutMs });
      checkArrayEqual(out, new Uint8Array(4096).fill(0xee), 'a later alloca');
    },
  }),
  defineCase({
    id: 'alloca.reuse-after-pending-dealloca',
    title:
      "an alloca served by a pending dealloca's memory (the pool is full) is ordered after that dealloca's frontier: its work never runs before the previous owner's gated work, nor does work after its own early dealloca",
    tags: ['alloca', 'reuse'],
    recordsCommands: false,
    async run(ctx, extra) {
      // A device of its own: the ring must be empty, so that an alloca of its capacity fills it.
      const handle = await extra.createDevice();
      const d = handle.device;
      try {
        const capacity = await ringCapacity(d, ctx.timeoutMs);
        if (capacity === undefined) return; // no 'ring' pool, or no allocatorStats() to size it
        const q = QueueAffinity.of(0);
        const n = 256;
        const timeout = { timeoutMs: ctx.timeoutMs };
        const at = (semaphore: Semaphore, value: number) => Fence.of({ semaphore, value });
        const readBack = async (buffer: Buffer): Promise<Uint8Array> => {
          const out = new Uint8Array(n);
          const r = d.createSemaphore(0);
          d.queueRead(q, Fence.empty, at(r, 1), { buffer, length: n }, out);
          await r.wait(1, timeout);
          return out;
        };
        // 1. The previous owner's write waits on a host gate; the next owner takes its block (the only
        // one) and writes at once. Its alloca signal waits for the dealloca's frontier: its write lands
        // after the gated one.
        const gate = d.createSemaphore(0);
        const s = d.createSemaphore(0);
        const first = d.queueAlloca(q, Fence.empty, at(s, 1), params, capacity, RING);
        d.queueWrite(q, Fence.join(at(s, 1), at(gate, 1)), at(s, 2), new Uint8Array(n).fill(0xaa), {
          buffer: first,
        });
        d.queueDealloca(q, at(s, 2), at(s, 3), first);
        const t = d.createSemaphore(0);
        const second = d.queueAlloca(q, Fence.empty, at(t, 1), params, capacity, RING);
        d.queueWrite(q, at(t, 1), at(t, 2), new Uint8Array(n).fill(0xbb), { buffer: second });
        await new Promise((resolve) => setTimeout(resolve, 0));
        checkEqual(t.value, 0, "the next owner's alloca signal before the previous owner's frontier");
        gate.signal(1);
        await t.wait(2, timeout);
        checkArrayEqual(await readBack(second), new Uint8Array(n).fill(0xbb), "the next owner's bytes");
        d.queueDealloca(q, at(t, 2), at(t, 3), second);
        await t.wait(3, timeout);
        // 2. The next owner is deallocated before it is live: its dealloca is signalled after its alloca,
        // so after the previous owner's user (a gated write into another buffer), and so is work after it.
        const target = d.createBuffer({ byteLength: n, usage: BufferUsage.DEFAULT });
        try {
          const gate2 = d.createSemaphore(0);
          const u = d.createSemaphore(0);
          const third = d.queueAlloca(q, Fence.empty, at(u, 1), params, capacity, RING);
          d.queueWrite(q, at(gate2, 1), at(u, 2), new Uint8Array(n).fill(0x11), { buffer: target });
          d.queueDealloca(q, Fence.join(at(u, 1), at(u, 2)), at(u, 3), third);
          const v = d.createSemaphore(0);
          const fourth = d.queueAlloca(q, Fence.empty, at(v, 1), params, capacity, RING);
          d.queueDealloca(q, Fence.empty, at(v, 2), fourth);
          d.queueWrite(q, at(v, 2), at(v, 3), new Uint8Array(n).fill(0x22), { buffer: target });
          gate2.signal(1);
          await v.wait(3, timeout);
          checkArrayEqual(
            await readBack(target),
            new Uint8Array(n).fill(0x22),
            "a buffer written after the early dealloca (the previous owner's user wrote it before)",
          );
        } finally {
          target.destroy();
        }
      } finally {
        await d.destroy();
      }
    },
  }),
  defineCase({
    id: 'alloca.ring-quarantine-hole',
    title:
      'a ring block quarantined by a dealloca whose wait failed is a hole, not a wall: once the ring wraps, later ring allocas are served beside it, and one it leaves no room for is RESOURCE_EXHAUSTED at the call',
    tags: ['alloca'],
    recordsCommands: false,
    async run(ctx, extra) {
      // A device of its own: its ring must be empty, so that quarters of its capacity fill it.
      const d = (await extra.createDevice()).device;
      try {
        const capacity = await ringCapacity(d, ctx.timeoutMs);
        if (capacity === undefined) return; // no 'ring' pool, or no allocatorStats() to size it
        const q = QueueAffinity.of(0);
        const timeout = { timeoutMs: ctx.timeoutMs };
        const at = (semaphore: Semaphore, value: number) => Fence.of({ semaphore, value });
        const quarter = capacity / 4;
        // A quarter of the ring, deallocated behind a gate that fails: quarantined.
        const live = d.createSemaphore(0);
        const a = d.queueAlloca(q, Fence.empty, at(live, 1), params, quarter, RING);
        await live.wait(1, timeout);
        const gate = d.createSemaphore(0);
        const done = d.createSemaphore(0);
        d.queueDealloca(q, Fence.join(at(live, 1), at(gate, 1)), at(done, 1), a);
        gate.fail(new KeelError(ErrorCode.DATA_LOSS, 'cts: the gate failed'));
        await expectRejection(
          done.wait(1, timeout),
          ErrorCode.ABORTED,
          'the dealloca behind the failed gate',
        );
        checkEqual(d.allocatorStats?.().get('ring')?.quarantinedBytes, quarter, 'quarantined ring bytes');
        // Eight quarters, strictly one live at a time: the ring wraps twice around the hole.
        let previous = Fence.empty;
        for (let i = 0; i < 8; i++) {
          const s = d.createSemaphore(0);
          const b = d.queueAlloca(q, previous, at(s, 1), params, quarter, RING);
          await s.wait(1, timeout);
          d.queueDealloca(q, at(s, 1), at(s, 2), b);
          await s.wait(2, timeout);
          previous = at(s, 2);
        }
        const stats = d.allocatorStats?.().get('ring');
        checkEqual(stats?.liveBytes, 0, 'live ring bytes at the end');
        checkEqual(stats?.dyingBytes, 0, 'dying ring bytes at the end');
        // The whole ring no longer fits: refused at once, not queued forever.
        expectKeelError(
          () => d.queueAlloca(q, Fence.empty, Fence.empty, params, capacity, RING),
          ErrorCode.RESOURCE_EXHAUSTED,
          'a ring alloca of the whole capacity beside the quarantined block',
        );
      } finally {
        await d.destroy();
      }
    },
  }),
  defineCase({
    id: 'lifecycle.destroy-queued-alloca',
    title:
      "destroy() fails with UNAVAILABLE an alloca queued for memory a pending dealloca frees (ring), and one waiting on pending work with the device's reason (UNAVAILABLE, or ABORTED caused by it), never RESOURCE_EXHAUSTED",
    tags: ['alloca', 'lifecycle'],
    recordsCommands: false,
    async run(ctx, extra) {
      const at = (semaphore: Semaphore, value = 1) => Fence.of({ semaphore, value });
      const q = QueueAffinity.of(0);
      // The ring: a device of its own, whose ring an alloca of its capacity fills.
      const ringDevice = (await extra.createDevice()).device;
      try {
        const capacity = await ringCapacity(ringDevice, ctx.timeoutMs);
        if (capacity !== undefined) {
          const d = ringDevice;
          const gate = d.createSemaphore(0);
          const work = d.createSemaphore(0);
          const queued = d.createSemaphore(0);
          const freed = d.createSemaphore(0);
          const a = d.queueAlloca(q, Fence.empty, Fence.empty, params, capacity, RING);
          d.queueBarrier(q, at(gate), at(work)); // work using `a`, waiting on the host
          d.queueAlloca(q, Fence.empty, at(queued), params, capacity, RING); // the ring is full
          d.queueDealloca(q, at(work), at(freed), a);
          await d.destroy();
          checkEqual(queued.failure?.code, ErrorCode.UNAVAILABLE, 'the queued alloca after destroy');
          checkEqual(freed.failure?.code, ErrorCode.UNAVAILABLE, 'the pending dealloca after destroy');
          checkEqual(work.failure?.code, ErrorCode.UNAVAILABLE, 'the pending work after destroy');
        }
      } finally {
        await ringDevice.destroy();
      }
      // The default pool: an alloca waiting on pending work fails with the device's reason.
      const d = (await extra.createDevice()).device;
      const gate = d.createSemaphore(0);
      const work = d.createSemaphore(0);
      const pending = d.createSemaphore(0);
      d.queueBarrier(q, at(gate), at(work));
      d.queueAlloca(q, at(work), at(pending), params, 64);
      await d.destroy();
      // UNAVAILABLE (the device's reason), or ABORTED because the work it waits on failed so: never
      // RESOURCE_EXHAUSTED.
      const failure = pending.failure;
      check(
        failure?.code === ErrorCode.UNAVAILABLE ||
          (failure?.code === ErrorCode.ABORTED && KeelError.is(failure.cause, ErrorCode.UNAVAILABLE)),
        `an alloca waiting on pending work after destroy: UNAVAILABLE or ABORTED caused by it, got ${failure?.code}`,
      );
      checkEqual(work.failure?.code, ErrorCode.UNAVAILABLE, 'the pending work after destroy');
    },
  }),
  defineCase({
    id: 'alloca.use-after-dealloca',
    title: 'using a buffer after its dealloca is FAILED_PRECONDITION',
    tags: ['alloca', 'validation'],
    recordsCommands: true,
    async run(ctx) {
      const s = ctx.semaphore();
      const q = ctx.queue(0);
      const at = (v: number) => Fence.of({ semaphore: s, value: v });
      const buffer = ctx.device.queueAlloca(q, Fence.empty, at(1), params, 64);
      // A reusable command buffer recorded while it was live.
      const b = ctx.binder();
      const cb = ctx.record('reusable');
      cb.fill(b.ref(buffer), 1, 1);
      cb.end();
      ctx.device.queueDealloca(q, at(1), at(2), buffer);
      await s.wait(2, { timeoutMs: ctx.timeoutMs });
      const code = ErrorCode.FAILED_PRECONDITION;
      expectKeelError(
        () => ctx.device.queueFill(q, Fence.empty, Fence.empty, { buffer }, 0, 1),
        code,
        'queueFill',
      );
      expectKeelError(
        () => ctx.device.queueRead(q, Fence.empty, Fence.empty, { buffer }, new Uint8Array(64)),
        code,
        'queueRead',
      );
      expectKeelError(
        () => ctx.device.queueDealloca(q, Fence.empty, Fence.empty, buffer),
        code,
        'second queueDealloca',
      );
      expectKeelError(
        () => ctx.device.queueExecute(q, Fence.empty, Fence.empty, [cb], [b.table()]),
        code,
        'queueExecute naming it',
      );
      const again = ctx.record();
      expectKeelError(() => again.fill({ buffer }, 0, 1), code, 'recording a direct ref to it');
    },
  }),
];
