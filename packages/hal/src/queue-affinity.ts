/**
 * Queue affinity: a 32-bit mask in which bit i selects queue i of a device (or target i of a scheduler).
 * A device maps a mask onto its queues by a documented policy (usually: the lowest set bit that names
 * one of its queues); an empty intersection with the device's queues is INVALID_ARGUMENT.
 * Masks are plain numbers kept as unsigned 32-bit values (`>>> 0`).
 */
import { ErrorCode, KeelError } from '@keel/fence';

export type QueueAffinity = number;

function checkIndex(index: number): void {
  if (!Number.isInteger(index) || index < 0 || index > 31) {
    throw new KeelError(ErrorCode.INVALID_ARGUMENT, `queue affinity: queue index ${index} is outside 0..31`);
  }
}

/** Helpers over affinity masks. */
export const QueueAffinity = {
  /** Every queue. */
  ANY: 0xffffffff,
  /** No queue; never valid for an operation. */
  NONE: 0,

  /** The mask with only the given queue indices set. */
  of(...indices: number[]): QueueAffinity {
    let mask = 0;
    for (const i of indices) {
      checkIndex(i);
      mask |= 1 << i;
    }
    return mask >>> 0;
  },
  /** The mask of queues 0..count-1. */
  firstN(count: number): QueueAffinity {
    if (!Number.isInteger(count) || count < 0 || count > 32) {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `queue affinity: queue count ${count} is outside 0..32`,
      );
    }
    return count === 32 ? 0xffffffff : ((1 << count) - 1) >>> 0;
  },
  /** Number of set bits. */
  count(mask: QueueAffinity): number {
    let m = mask >>> 0;
    m -= (m >>> 1) & 0x55555555;
    m = (m & 0x33333333) + ((m >>> 2) & 0x33333333);
    return (((m + (m >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
  },
  /** Index of the lowest set bit, or -1 for an empty mask. */
  first(mask: QueueAffinity): number {
    const m = mask >>> 0;
    return m === 0 ? -1 : 31 - Math.clz32(m & -m);
  },
  and(a: QueueAffinity, b: QueueAffinity): QueueAffinity {
    return (a & b) >>> 0;
  },
  or(a: QueueAffinity, b: QueueAffinity): QueueAffinity {
    return (a | b) >>> 0;
  },
  has(mask: QueueAffinity, index: number): boolean {
    checkIndex(index);
    return ((mask >>> index) & 1) === 1;
  },
  isEmpty(mask: QueueAffinity): boolean {
    return mask >>> 0 === 0;
  },
  /** Yields the set queue indices in ascending order. */
  *indices(mask: QueueAffinity): IterableIterator<number> {
    let m = mask >>> 0;
    while (m !== 0) {
      const i = 31 - Math.clz32(m & -m);
      yield i;
      m = (m & ~(1 << i)) >>> 0;
    }
  },
  /**
   * Validates a caller's mask against a device with `queueCount` queues and returns the queue index
   * the default policy picks: the lowest set bit below `queueCount`. An empty intersection is
   * INVALID_ARGUMENT naming `what` (e.g. "device 'cpu' queueExecute").
   */
  select(mask: QueueAffinity, queueCount: number, what: string): number {
    if (typeof mask !== 'number' || !Number.isInteger(mask)) {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `${what}: queue affinity must be an integer mask, got ${String(mask)}`,
      );
    }
    const available = QueueAffinity.firstN(Math.min(queueCount, 32));
    const m = (mask & available) >>> 0;
    if (m === 0) {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `${what}: queue affinity 0x${(mask >>> 0).toString(16)} selects none of the device's ${queueCount} queue(s)`,
      );
    }
    return 31 - Math.clz32(m & -m);
  },
} as const;
