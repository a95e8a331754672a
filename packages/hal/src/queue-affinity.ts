/**
 * Queue affinity: a 32-bit mask in which bit i selects queue i of a device (or target i of a scheduler).
 * A device maps a mask onto its queues by a documented policy (usually: the lowest set bit that names
 * one of its queues); an empty intersection with the device's queues is INVALID_ARGUMENT.
 *
 * Valid masks are the 32-bit integers: 0..0xFFFFFFFF, and the int32 values -2^31..-1 that JavaScript's
 * bit operators produce (`~0`, `1 << 31`), taken as their unsigned equivalent (`-1` is ANY). Anything
 * else (a non-number, a non-integer, NaN, a value above 0xFFFFFFFF such as 2**32 + 1, below -2^31) is
 * INVALID_ARGUMENT wherever a mask is taken, never truncated. Masks are returned as unsigned values.
 */
import { describeValue } from '@keel/fence';
import { invalid } from './driver/invalid';

export type QueueAffinity = number;

// A const enum: the build writes the values in place.
enum Mask {
  MIN = -0x80000000,
  MAX = 0xffffffff,
}

function checkIndex(index: number): void {
  if (!Number.isInteger(index) || index < 0 || index > 31) {
    throw invalid(`queue affinity: queue index ${describeValue(index)} is outside 0..31`);
  }
}

/** True for a valid mask (see the module comment). */
function isMask(mask: unknown): mask is QueueAffinity {
  return typeof mask === 'number' && Number.isInteger(mask) && mask >= Mask.MIN && mask <= Mask.MAX;
}

/** The unsigned mask, or INVALID_ARGUMENT naming `what`. */
function checkMask(mask: unknown, what: string): QueueAffinity {
  if (isMask(mask)) return mask >>> 0;
  throw invalid(
    `${what}: queue affinity must be a 32-bit integer mask (0 to 0xffffffff, or an int32), got ${describeValue(mask)}`,
  );
}

/** checkMask for QueueAffinity's own helpers: `method` is named only in the message (no string otherwise). */
function own(mask: unknown, method: string): QueueAffinity {
  return isMask(mask) ? mask >>> 0 : checkMask(mask, `QueueAffinity.${method}`);
}

/** Helpers over affinity masks. */
export const QueueAffinity = {
  /** Every queue. */
  ANY: 0xffffffff,
  /** No queue; never valid for an operation. */
  NONE: 0,

  /** True when `mask` is a valid mask (a 32-bit integer, see the module comment). */
  isValid(mask: unknown): mask is QueueAffinity {
    return isMask(mask);
  },
  /** The unsigned form of `mask`; INVALID_ARGUMENT naming `what` unless it is a valid mask. */
  check(mask: unknown, what: string): QueueAffinity {
    return checkMask(mask, what);
  },
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
      throw invalid(`queue affinity: queue count ${describeValue(count)} is outside 0..32`);
    }
    return count === 32 ? 0xffffffff : ((1 << count) - 1) >>> 0;
  },
  /** Number of set bits. */
  count(mask: QueueAffinity): number {
    let m = own(mask, 'count');
    m -= (m >>> 1) & 0x55555555;
    m = (m & 0x33333333) + ((m >>> 2) & 0x33333333);
    return (((m + (m >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
  },
  /** Index of the lowest set bit, or -1 for an empty mask. */
  first(mask: QueueAffinity): number {
    const m = own(mask, 'first');
    return m === 0 ? -1 : 31 - Math.clz32(m & -m);
  },
  and(a: QueueAffinity, b: QueueAffinity): QueueAffinity {
    return (own(a, 'and') & own(b, 'and')) >>> 0;
  },
  or(a: QueueAffinity, b: QueueAffinity): QueueAffinity {
    return (own(a, 'or') | own(b, 'or')) >>> 0;
  },
  has(mask: QueueAffinity, index: number): boolean {
    const m = own(mask, 'has');
    checkIndex(index);
    return ((m >>> index) & 1) === 1;
  },
  isEmpty(mask: QueueAffinity): boolean {
    return own(mask, 'isEmpty') === 0;
  },
  /** Yields the set queue indices in ascending order. */
  *indices(mask: QueueAffinity): IterableIterator<number> {
    let m = own(mask, 'indices');
    while (m !== 0) {
      const i = 31 - Math.clz32(m & -m);
      yield i;
      m = (m & ~(1 << i)) >>> 0;
    }
  },
  /** The mask as messages show it: `0x` and its unsigned hex digits (any valid mask). */
  format(mask: QueueAffinity): string {
    return isMask(mask) ? `0x${(mask >>> 0).toString(16)}` : describeValue(mask);
  },
  /**
   * Validates a caller's mask against a device with `queueCount` queues and returns the queue index
   * the default policy picks: the lowest set bit below `queueCount`. A mask that is not a 32-bit
   * integer, or an empty intersection, is INVALID_ARGUMENT naming `what` (e.g. "device 'cpu'
   * queueExecute").
   */
  select(mask: QueueAffinity, queueCount: number, what: string): number {
    const checked = checkMask(mask, what);
    const available = QueueAffinity.firstN(Math.min(queueCount, 32));
    const m = (checked & available) >>> 0;
    if (m === 0) {
      throw invalid(
        `${what}: queue affinity 0x${checked.toString(16)} selects none of the device's ${queueCount} queue(s)`,
      );
    }
    return 31 - Math.clz32(m & -m);
  },
} as const;
