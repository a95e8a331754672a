/**
 * The model behind the property tests: random sequences of reads and writes on random locations (host, two managers on one
 * device, a manager on a second device) keep every tensor equal to a host-only model, and the
 * counters equal what the residency rules predict (with an unlimited budget) or stay consistent
 * (with a budget that forces evictions).
 */
import type { Device } from '@keel/hal';
import fc from 'fast-check';
import { expect } from 'vitest';
import { movedBytes, ResidencyManager, sumCounters, Tensor } from '../src/index';
import { ANY, signalOf } from './helpers';

const ELEMENTS = 24; // 96 bytes per tensor
export const BYTES = ELEMENTS * 4;
const TENSORS = 3;
const MANAGERS = 3; // 0 and 1 on device A, 2 on device B

type Op =
  | { kind: 'hostWrite'; t: number; seed: number }
  | { kind: 'deviceWrite'; t: number; m: number; seed: number }
  | { kind: 'deviceRead'; t: number; m: number }
  | { kind: 'readwrite'; t: number; m: number; seed: number }
  | { kind: 'toHost'; t: number }
  | { kind: 'evict'; t: number; m: number }
  | { kind: 'copy'; from: number; to: number; m: number };

const tensorIndex = fc.integer({ min: 0, max: TENSORS - 1 });
const managerIndex = fc.integer({ min: 0, max: MANAGERS - 1 });
const seed = fc.integer({ min: 1, max: 0x7fffffff });
export const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('hostWrite' as const), t: tensorIndex, seed }),
  fc.record({ kind: fc.constant('deviceWrite' as const), t: tensorIndex, m: managerIndex, seed }),
  fc.record({ kind: fc.constant('deviceRead' as const), t: tensorIndex, m: managerIndex }),
  fc.record({ kind: fc.constant('readwrite' as const), t: tensorIndex, m: managerIndex, seed }),
  fc.record({ kind: fc.constant('toHost' as const), t: tensorIndex }),
  fc.record({ kind: fc.constant('evict' as const), t: tensorIndex, m: managerIndex }),
  fc.record({ kind: fc.constant('copy' as const), from: tensorIndex, to: tensorIndex, m: managerIndex }),
);

function dataOf(s: number): Int32Array {
  return Int32Array.from({ length: ELEMENTS }, (_, i) => (Math.imul(s, i + 1) ^ (s >>> 3)) | 0);
}

/** Where each tensor is up to date ('host' or a manager index) and which managers hold a copy. */
interface ModelTensor {
  data: Int32Array;
  valid: Set<'host' | number>;
  copies: Set<number>;
}

interface Predicted {
  h2d: number;
  d2h: number;
  d2d: number;
  evictions: number;
  writebacks: number;
}

const sameDevice = (a: number, b: number) => a < 2 === b < 2;

/** The residency rules, as the model predicts them (unlimited budget). */
function predictRead(t: ModelTensor, m: number, p: Predicted): void {
  t.copies.add(m);
  if (t.valid.has(m)) return;
  const local = [...t.valid].some((v) => v !== 'host' && v !== m && sameDevice(v, m));
  if (local) p.d2d += BYTES;
  else if (t.valid.has('host')) p.h2d += BYTES;
  else {
    p.d2h += BYTES;
    p.h2d += BYTES;
    t.valid.add('host');
  }
  t.valid.add(m);
}

/** Runs `ops` on managers 0 and 1 on devices[0] and manager 2 on devices[1]; checks everything. */
export async function run(
  ops: readonly Op[],
  devices: readonly Device[],
  budget: number | undefined,
): Promise<void> {
  const [a, b] = devices as [Device, Device];
  const managers = [
    new ResidencyManager(a, { budgetBytes: budget, label: 'A0' }),
    new ResidencyManager(a, { budgetBytes: budget, label: 'A1', allocation: 'buffers' }),
    new ResidencyManager(b, { budgetBytes: budget, label: 'B' }),
  ];
  const tensors = Array.from({ length: TENSORS }, (_, i) =>
    Tensor.fromHost('i32', [ELEMENTS], dataOf(i + 1), { copy: true, label: `t${i}` }),
  );
  const model: ModelTensor[] = tensors.map((_, i) => ({
    data: dataOf(i + 1),
    valid: new Set<'host' | number>(['host']),
    copies: new Set<number>(),
  }));
  const p: Predicted = { h2d: 0, d2h: 0, d2d: 0, evictions: 0, writebacks: 0 };
  const pending: Promise<void>[] = [];
  try {
    for (const o of ops) {
      switch (o.kind) {
        case 'hostWrite': {
          tensors[o.t]!.write(dataOf(o.seed));
          model[o.t]!.data = dataOf(o.seed);
          model[o.t]!.valid = new Set(['host']);
          break;
        }
        case 'deviceWrite':
        case 'readwrite': {
          const m = managers[o.m]!;
          const lease = m.acquire(tensors[o.t]!, o.kind === 'deviceWrite' ? 'write' : 'readwrite');
          const done = signalOf(m.device);
          m.device.queueUpdate(ANY, lease.wait, done, dataOf(o.seed), lease.ref);
          lease.release(done);
          const t = model[o.t]!;
          if (o.kind === 'readwrite') predictRead(t, o.m, p);
          t.copies.add(o.m);
          t.data = dataOf(o.seed);
          t.valid = new Set([o.m]);
          break;
        }
        case 'deviceRead': {
          const m = managers[o.m]!;
          const lease = m.acquire(tensors[o.t]!, 'read');
          const out = new Int32Array(ELEMENTS);
          const done = signalOf(m.device);
          m.device.queueRead(ANY, lease.wait, done, lease.ref, out);
          lease.release(done);
          const expected = model[o.t]!.data;
          pending.push(done.wait().then(() => expect(Array.from(out)).toEqual(Array.from(expected))));
          predictRead(model[o.t]!, o.m, p);
          break;
        }
        case 'toHost': {
          const t = model[o.t]!;
          const expected = Array.from(t.data);
          const view = tensors[o.t]!.toHost();
          if (!t.valid.has('host')) p.d2h += BYTES;
          t.valid.add('host');
          expect(Array.from(await view)).toEqual(expected);
          break;
        }
        case 'evict': {
          const had = managers[o.m]!.evict(tensors[o.t]!);
          const t = model[o.t]!;
          // With a budget, copies also leave by eviction, which the model does not track.
          if (budget === undefined) expect(had).toBe(t.copies.has(o.m));
          if (had) {
            p.evictions++;
            if (t.valid.size === 1 && t.valid.has(o.m)) {
              p.writebacks++;
              p.d2h += BYTES;
              t.valid.add('host');
            }
            t.valid.delete(o.m);
            t.copies.delete(o.m);
          }
          break;
        }
        case 'copy': {
          if (o.from === o.to) break;
          const m = managers[o.m]!;
          m.copy(tensors[o.from]!, tensors[o.to]!);
          predictRead(model[o.from]!, o.m, p);
          const to = model[o.to]!;
          to.copies.add(o.m);
          to.data = model[o.from]!.data;
          to.valid = new Set([o.m]);
          break;
        }
      }
      for (const m of managers) expect(m.counters.residentBytes).toBeLessThanOrEqual(m.budgetBytes);
    }
    await Promise.all(pending);
    // Every tensor equals the model, on the host and on every device.
    for (let i = 0; i < TENSORS; i++) {
      expect(Array.from(await tensors[i]!.toHost())).toEqual(Array.from(model[i]!.data));
      for (const m of managers) {
        const lease = m.acquire(tensors[i]!, 'read');
        const out = new Int32Array(ELEMENTS);
        const done = signalOf(m.device);
        m.device.queueRead(ANY, lease.wait, done, lease.ref, out);
        lease.release(done);
        await done.wait();
        expect(Array.from(out)).toEqual(Array.from(model[i]!.data));
      }
    }
    const total = sumCounters(...managers.map((m) => m.counters));
    expect(movedBytes(total)).toBe(total.transfers * BYTES);
    expect(total.hostCopyBytes).toBe(total.hostToDeviceBytes + total.deviceToHostBytes);
    if (budget === undefined) {
      // Before the final sweep: compare with the prediction. The sweep itself is predicted too.
      for (let i = 0; i < TENSORS; i++) {
        if (!model[i]!.valid.has('host')) p.d2h += BYTES;
        model[i]!.valid.add('host');
        for (let m = 0; m < MANAGERS; m++) predictRead(model[i]!, m, p);
      }
      expect({
        h2d: total.hostToDeviceBytes,
        d2h: total.deviceToHostBytes,
        d2d: total.deviceToDeviceBytes,
        evictions: total.evictions,
        writebacks: total.writebacks,
      }).toEqual(p);
    } else {
      expect(total.writebacks).toBeLessThanOrEqual(total.evictions);
    }
  } finally {
    for (const t of tensors) t.release();
    for (const m of managers) {
      expect(m.counters.residentBytes).toBe(0);
      await m.dispose();
    }
  }
}
