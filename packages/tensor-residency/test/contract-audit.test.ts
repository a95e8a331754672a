/**
 * Contract violations found by the residency audit (notes/audit-res.md), each pinned by a test on the
 * real CPU device in sync and task modes: a host write during a read stream (copy on write), a device
 * lost with a readback or write-back in flight (DATA_LOSS, not ABORTED forever), huge tensors
 * (RESOURCE_EXHAUSTED, not RangeError), `ensureOnHost` arguments, the manager's affinity checked at
 * creation, unknown stream options, and the method `copy` names in its errors.
 */
import { Fence, TimelineSemaphore } from '@keel/fence';
import { type Device, ErrorCode } from '@keel/hal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureOnHost, ResidencyManager, type StreamOptions, Tensor } from '../src/index';
import { ANY, type DeviceKind, expectKeelError, makeDevice, signalOf } from './helpers';

const KINDS: readonly DeviceKind[] = ['cpu-sync', 'cpu-task'];

describe.each(KINDS)('residency contract (audit) on %s', (kind) => {
  let device: Device;
  beforeAll(async () => {
    device = await makeDevice(kind);
  });
  afterAll(async () => {
    await device.destroy();
  });

  /** Streams `t` (u32) for reading in 16-byte chunks, writing it on the host during chunk 0. */
  async function streamWithHostWrite(m: ResidencyManager, t: Tensor<'u32'>): Promise<number[]> {
    const out = new Uint32Array(t.size);
    let writeError: unknown;
    const done = m.stream(t, { chunkBytes: 16 }, (chunk) => {
      if (chunk.index === 0) {
        try {
          t.write(new Array(t.size).fill(2));
        } catch (error) {
          writeError = error;
        }
      }
      const signal = signalOf(device);
      const view = new Uint32Array(out.buffer, chunk.byteOffset, chunk.elementCount);
      device.queueRead(ANY, chunk.wait, signal, chunk.ref, view);
      return signal;
    });
    await done.wait({ timeoutMs: 10_000 });
    expect(writeError).toBeUndefined();
    return Array.from(out);
  }

  it('finding 1: a host write inside a read stream goes to fresh memory; the stream sees one version', async () => {
    const m = new ResidencyManager(device, { budgetBytes: 64 });
    const t = Tensor.fromHost('u32', [16], new Array(16).fill(1));
    expect(await streamWithHostWrite(m, t)).toEqual(new Array(16).fill(1));
    expect(Array.from(await t.toHost())).toEqual(new Array(16).fill(2));
    await m.dispose();
  });

  it('finding 1: the same with pinned host memory (its storage outlives the stream that uses it)', async () => {
    const m = new ResidencyManager(device, { budgetBytes: 64 });
    const t = m.createPinned('u32', [16]);
    t.writeWith((view) => view.fill(1));
    expect(t.isPinned).toBe(true);
    expect(await streamWithHostWrite(m, t)).toEqual(new Array(16).fill(1));
    expect(Array.from(await t.toHost())).toEqual(new Array(16).fill(2));
    t.release();
    await m.dispose();
  });

  it('finding 2: a device lost with a readback and a write-back in flight leaves DATA_LOSS, not ABORTED', async () => {
    const lost = await makeDevice(kind, 'doomed');
    const m = new ResidencyManager(lost, { budgetBytes: 32 });
    const gate = new TimelineSemaphore(0, { label: 'gate' });
    const y = Tensor.fromHost('u32', [4], [2, 2, 2, 2], { label: 'y' });
    const w = Tensor.fromHost('u32', [4], [3, 3, 3, 3], { label: 'w' });
    for (const t of [y, w]) {
      const lease = m.acquire(t, 'readwrite');
      const done = signalOf(lost);
      const wait = Fence.join(lease.wait, Fence.of({ semaphore: gate, value: 1 }));
      lost.queueFill(ANY, wait, done, lease.ref, 50, 4);
      lease.release(done);
    }
    const first = y.toHost(); // a readback in flight (waits on the gated fill)
    first.catch(() => {});
    expect(m.evict(w)).toBe(true); // a write-back in flight
    await lost.destroy();
    while (m.lostReason === undefined) await new Promise((r) => setTimeout(r, 1));
    await expectKeelError(() => first, ErrorCode.ABORTED);
    await expectKeelError(() => y.toHost(), ErrorCode.DATA_LOSS, /tensor 'y'.*only up-to-date copy/);
    await expectKeelError(() => w.toHost(), ErrorCode.DATA_LOSS, /tensor 'w'.*only up-to-date copy/);
    expect(y.isOnHost).toBe(false);
    // A full write recovers the tensor.
    y.write([1, 1, 1, 1]);
    expect(Array.from(await y.toHost())).toEqual([1, 1, 1, 1]);
  });

  it('finding 2: a readback that landed before the loss keeps its bytes', async () => {
    const lost = await makeDevice(kind, 'doomed');
    const m = new ResidencyManager(lost, { budgetBytes: 32 });
    const y = Tensor.fromHost('u32', [4], [2, 2, 2, 2], { label: 'y' });
    const lease = m.acquire(y, 'write');
    const done = signalOf(lost);
    lost.queueFill(ANY, lease.wait, done, lease.ref, 7, 4);
    lease.release(done);
    expect(Array.from(await y.toHost())).toEqual([7, 7, 7, 7]);
    await lost.destroy();
    while (m.lostReason === undefined) await new Promise((r) => setTimeout(r, 1));
    expect(Array.from(await y.toHost())).toEqual([7, 7, 7, 7]);
  });

  it('finding 5: tensors too large for host memory are RESOURCE_EXHAUSTED naming the tensor and the size', async () => {
    await expectKeelError(
      () => Tensor.zeros('f32', [2 ** 40], { label: 'huge' }),
      ErrorCode.RESOURCE_EXHAUSTED,
      /Tensor\.zeros: tensor 'huge' \(f32 \[1099511627776\]\): cannot allocate 4398046511104 bytes of host memory/,
    );
    await expectKeelError(
      () => Tensor.fromHost('f32', [2 ** 40], [] as number[]),
      ErrorCode.INVALID_ARGUMENT,
      /shape mismatch/,
    );
    const m = new ResidencyManager(device, { budgetBytes: 1024 });
    const big = Tensor.empty('f32', [2 ** 40], { label: 'big' });
    let calls = 0;
    await expectKeelError(
      () =>
        m.stream(big, { access: 'write' }, () => {
          calls++;
          return Fence.empty;
        }),
      ErrorCode.RESOURCE_EXHAUSTED,
      /ResidencyManager\.stream: tensor 'big' \(f32 \[1099511627776\]\): cannot allocate 4398046511104 bytes/,
    );
    // Nothing left behind: no callback, no resident bytes, no lease, still without contents.
    expect(calls).toBe(0);
    expect(m.counters.residentBytes).toBe(0);
    expect(big.version).toBe(0);
    const lease = m.acquire(Tensor.fromHost('f32', [2], [1, 2]), 'write');
    lease.cancel();
    big.release();
    await m.dispose();
  });

  it('finding 6: ensureOnHost refuses what is not a list of tensors (INVALID_ARGUMENT)', async () => {
    for (const bad of [null, undefined, 5, {}]) {
      await expectKeelError(
        () => ensureOnHost(bad as never),
        ErrorCode.INVALID_ARGUMENT,
        /ensureOnHost: tensors must be an array \(or iterable\) of Tensors, got/,
      );
    }
    await expectKeelError(
      () => ensureOnHost([5] as never),
      ErrorCode.INVALID_ARGUMENT,
      /tensor 0: not a Tensor/,
    );
    expect(await ensureOnHost([])).toEqual([]);
  });

  it('finding 10: the affinity must select a queue of the device, checked at creation', async () => {
    for (const allocation of ['queue-ordered', 'buffers'] as const) {
      for (const affinity of [0, 0b100]) {
        await expectKeelError(
          () => new ResidencyManager(device, { affinity, allocation }),
          ErrorCode.INVALID_ARGUMENT,
          new RegExp(
            `ResidencyManager: option 'affinity' on device '${kind}[^']*': queue affinity 0x${affinity.toString(16)} selects none of the device's 2 queue\\(s\\)`,
          ),
        );
      }
    }
    const m = new ResidencyManager(device, { affinity: 0b110, allocation: 'buffers' });
    const x = Tensor.fromHost('u32', [4], [1, 2, 3, 4]);
    m.acquire(x, 'read').release(Fence.empty);
    expect(m.residentCount).toBe(1);
    await m.dispose();
  });

  it('finding 10: a failed upload leaves no copy registered', async () => {
    const m = new ResidencyManager(device, { allocation: 'buffers' });
    const x = Tensor.fromHost('u32', [4], [1, 2, 3, 4]);
    // A source on a destroyed device: the move through the host fails before anything is enqueued
    // (UNAVAILABLE from the source's manager, which notices the destroy in the same turn).
    const other = await makeDevice(kind, 'other');
    const m2 = new ResidencyManager(other);
    const lease = m2.acquire(x, 'write');
    const done = signalOf(other);
    other.queueFill(ANY, lease.wait, done, lease.ref, 1, 4);
    lease.release(done);
    await done.wait();
    const destroyed = other.destroy();
    await expectKeelError(() => m.acquire(x, 'read'), ErrorCode.UNAVAILABLE, /lost or destroyed/);
    expect(m.residentCount).toBe(0);
    expect(m.counters.residentBytes).toBe(0);
    expect(x.locations).not.toContain(m);
    await destroyed;
    await m.dispose();
  });

  it('finding 11: stream options are checked with checkOptions (unknown keys, wrong types)', async () => {
    const m = new ResidencyManager(device, { budgetBytes: 64 });
    const t = Tensor.fromHost('u32', [16], new Array(16).fill(1));
    let calls = 0;
    const count = () => {
      calls++;
      return Fence.empty;
    };
    await expectKeelError(
      () => m.stream(t, { chunkbytes: 8 } as StreamOptions, count),
      ErrorCode.INVALID_ARGUMENT,
      /ResidencyManager\.stream: unknown option 'chunkbytes' \(known options: access, chunkBytes\)/,
    );
    await expectKeelError(
      () => m.stream(t, { chunkBytes: '8' } as unknown as StreamOptions, count),
      ErrorCode.INVALID_ARGUMENT,
      /ResidencyManager\.stream: option 'chunkBytes' must be an integer ≥ 1, got "8"/,
    );
    await expectKeelError(
      () => m.stream(t, 'read' as unknown as StreamOptions, count),
      ErrorCode.INVALID_ARGUMENT,
      /ResidencyManager\.stream: options must be an object/,
    );
    expect(calls).toBe(0);
    await m.stream(t, { chunkBytes: 8 }, count).wait();
    expect(calls).toBe(8);
    await m.dispose();
  });

  it('finding 12: copy names itself in its errors', async () => {
    const m = new ResidencyManager(device, { budgetBytes: 64 });
    const a = Tensor.fromHost('f32', [2], [1, 2]);
    const b = Tensor.fromHost('f32', [2], [3, 4]);
    const held = m.acquire(b, 'read');
    await expectKeelError(() => m.copy(a, b), ErrorCode.FAILED_PRECONDITION, /^ResidencyManager\.copy: /);
    held.release(Fence.empty);
    const small = new ResidencyManager(device, { budgetBytes: 8 });
    await expectKeelError(
      () => small.copy(a, b),
      ErrorCode.RESOURCE_EXHAUSTED,
      /^ResidencyManager\.copy: the batch needs 16 bytes/,
    );
    await small.dispose();
    await m.dispose();
  });
});

describe('shape messages (fault-injection fuzz)', () => {
  it('a dimension that cannot be turned into a string (toString: null) is INVALID_ARGUMENT, not a TypeError', async () => {
    for (const dim of [{ toString: null }, Object.create(null), Symbol('d')]) {
      await expectKeelError(() => Tensor.fromHost('f32', [dim as never], []), ErrorCode.INVALID_ARGUMENT);
    }
  });
});
