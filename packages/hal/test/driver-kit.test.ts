/**
 * Issue 16: pieces of the driver kit on their own — the one ref encoding, the typed-array builder,
 * the run list's trampoline (a chain of pushes made while running stays iterative and in order) and the
 * pool of operation records both devices use.
 */

import { Fence } from '@keel/fence';
import { describe, expect, it } from 'vitest';
import {
  directCode,
  directIndex,
  isSlotCode,
  OpKind,
  QueueRecord,
  REF_STRIDE,
  RecordPool,
  RefTableBuilder,
  RunList,
  slotsUsedBy,
  snapshotBindingTable,
  TypedArrayBuilder,
} from '../src/driver/index';
import type { Binding, Buffer, CommandBuffer, CommandSink, StructureRef } from '../src/index';

const fake = (label: string) => ({ label, byteLength: 64 }) as unknown as Buffer;

describe('driver kit', () => {
  it('encodes slots as themselves and direct buffers as -(index + 1), de-duplicated', () => {
    const a = fake('a');
    const b = fake('b');
    const refs = new RefTableBuilder((buffer) => buffer);
    expect(refs.push(a, 0, 16, 'x')).toBe(0);
    expect(refs.push(3, 8, -1, 'x')).toBe(1);
    expect(refs.push(b, 4, 4, 'x')).toBe(2);
    expect(refs.push(a, 32, 8, 'x')).toBe(3);
    const v = refs.values.toArray();
    expect(v.length).toBe(4 * REF_STRIDE);
    expect([...v.subarray(0, 3)]).toEqual([directCode(0), 0, 16]);
    expect([...v.subarray(3, 6)]).toEqual([3, 8, -1]);
    expect(isSlotCode(v[3]!)).toBe(true);
    expect(isSlotCode(v[6]!)).toBe(false);
    expect(directIndex(v[6]!)).toBe(1);
    expect(directIndex(v[9]!)).toBe(0);
    expect(refs.buffers).toEqual([a, b]);
    expect([...refs.slots]).toEqual([3]);
    expect([...refs.usedSlots()]).toEqual([3]);
    refs.truncate(2);
    expect(refs.count).toBe(2);
  });

  it('snapshots only the slots given, in time of their count, from a sparse table of length 2^31 - 1', () => {
    const started = performance.now();
    const high = 2 ** 30;
    const top = 2 ** 31 - 2;
    const a = fake('a');
    const b = fake('b');
    const table: (Binding | undefined)[] = [];
    table[3] = { buffer: a, offset: 4, length: 8 };
    table[5] = { buffer: b }; // not used: left out
    table[top] = { buffer: b };
    const copy = snapshotBindingTable(table, Int32Array.of(3, high, top));
    expect(copy[3]).toEqual({ buffer: a, offset: 4, length: 8 });
    expect(copy[3]).not.toBe(table[3]);
    expect(copy[top]).toEqual({ buffer: b, offset: undefined, length: undefined });
    expect(high in copy).toBe(false);
    expect(Object.keys(copy)).toEqual(['3', String(top)]);
    // The caller changes its table afterwards: the copy keeps what it had.
    table[top] = { buffer: a };
    expect(copy[top]!.buffer).toBe(b);
    expect(performance.now() - started).toBeLessThan(200);
  });

  it('slotsUsedBy lists the slots of fills, updates, copies, bindings and indirect parameters, once, cached', () => {
    const direct = fake('direct');
    let replays = 0;
    const plans = new Map<object, unknown>();
    const cb = {
      replayStructure(sink: CommandSink<StructureRef>) {
        replays++;
        sink.fill(2 ** 30, 0, 4, 0, 4);
        sink.update(new Uint8Array(4), 7, 0, 4);
        sink.copy(direct, 0, 2 ** 31 - 2, 0, 4);
        const bindings = { count: 2, buffers: [7, 1], offsets: [0, 0], lengths: [4, 4] };
        sink.dispatchIndirect({} as never, 0, 9, 0, new Uint32Array(0), bindings);
      },
      devicePlan<T>(key: object, build: (commandBuffer: CommandBuffer) => T): T {
        if (!plans.has(key)) plans.set(key, build(cb as unknown as CommandBuffer));
        return plans.get(key) as T;
      },
    };
    const used = slotsUsedBy(cb as unknown as CommandBuffer);
    expect([...used]).toEqual([1, 7, 9, 2 ** 30, 2 ** 31 - 2]);
    expect(slotsUsedBy(cb as unknown as CommandBuffer)).toBe(used);
    expect(replays).toBe(1);
  });

  it('refuses a foreign buffer through accept, naming the role', () => {
    const refs = new RefTableBuilder<Buffer>((_buffer, what) => {
      throw new Error(`${what}: foreign`);
    });
    expect(() => refs.push(fake('x'), 0, 4, 'copy source')).toThrow('copy source: foreign');
    expect(refs.push(0, 0, 4, 'slot')).toBe(0);
  });

  it('grows typed arrays by doubling and keeps the values', () => {
    const ints = new TypedArrayBuilder('Int32', 2);
    for (let i = 0; i < 100; i++) ints.push(i);
    ints.append([100, 101]);
    expect(ints.length).toBe(102);
    expect(ints.toArray()).toBeInstanceOf(Int32Array);
    expect([...ints.toArray().subarray(98)]).toEqual([98, 99, 100, 101]);
    const bytes = new TypedArrayBuilder('Uint8', 1);
    bytes.append(new Uint8Array([1, 2, 3]));
    expect([...bytes.toArray()]).toEqual([1, 2, 3]);
  });

  it('runs items pushed while running after the current one, without recursion', () => {
    const order: number[] = [];
    let depth = 0;
    let maxDepth = 0;
    const list: RunList<number> = new RunList((n) => {
      depth++;
      maxDepth = Math.max(maxDepth, depth);
      order.push(n);
      if (n < 10_000) list.push(n + 1);
      depth--;
    });
    list.push(0);
    expect(order.length).toBe(10_001);
    expect(order[10_000]).toBe(10_000);
    expect(maxDepth).toBe(1);
  });

  it('keeps first-in first-out order when one item queues several, and recovers after a throw', () => {
    const order: string[] = [];
    const list: RunList<string> = new RunList((item) => {
      order.push(item);
      if (item === 'a') {
        list.push('b');
        list.push('c');
      }
      if (item === 'b') list.push('d');
      if (item === 'boom') throw new Error('boom');
    });
    list.push('a');
    expect(order).toEqual(['a', 'b', 'c', 'd']);
    expect(() => list.push('boom')).toThrow('boom');
    list.push('e');
    expect(order).toEqual(['a', 'b', 'c', 'd', 'boom', 'e']);
  });

  it('pools records: reset on release, reused last-in first-out, generation counted, bounded, closed', () => {
    class Record extends QueueRecord {
      extra: object | undefined;
      override reset(): void {
        this.resetRecord();
        this.extra = undefined;
      }
    }
    let made = 0;
    const pool = new RecordPool(() => {
      made++;
      return new Record();
    }, 2);
    const a = pool.acquire(OpKind.FILL, 1, Fence.empty, Fence.empty);
    const b = pool.acquire(OpKind.COPY, 0, Fence.empty, Fence.empty);
    expect(made).toBe(2);
    expect([a.kind, a.queue, a.generation]).toEqual([OpKind.FILL, 1, 1]);
    a.extra = {};
    a.bytes = new Uint8Array(4);
    pool.release(a);
    expect([a.extra, a.bytes]).toEqual([undefined, undefined]);
    pool.release(a); // a second release is ignored: two acquires never share a record
    pool.release(b);
    expect(pool.size).toBe(2);
    const c = pool.acquire(OpKind.BARRIER, 0, Fence.empty, Fence.empty);
    expect(c).toBe(b);
    expect(c.generation).toBe(2);
    expect(pool.acquire(OpKind.READ, 0, Fence.empty, Fence.empty)).toBe(a);
    expect(pool.acquire(OpKind.READ, 0, Fence.empty, Fence.empty)).not.toBe(a);
    expect(made).toBe(3);
    // At most `max` kept; none once closed.
    for (const r of [a, b, new Record()]) pool.release(r);
    expect(pool.size).toBe(2);
    pool.close();
    expect(pool.size).toBe(0);
    const d = pool.acquire(OpKind.FILL, 0, Fence.empty, Fence.empty);
    pool.release(d);
    expect(pool.size).toBe(0);
  });
});
