/**
 * Usage requirements of recorded commands. A requirement is a bit set over hal's BufferUsage bits plus
 * one internal bit, `DISPATCH_ANY`, meaning "DISPATCH_STORAGE or DISPATCH_UNIFORM" (a dispatch binding
 * may be either; the export does not say which). Requirements of one slot are OR-ed together.
 */
import { BufferUsage, describeUsage } from '@keel/hal';

/** Internal bit: the buffer needs DISPATCH_STORAGE or DISPATCH_UNIFORM. Outside hal's usage bits. */
export const DISPATCH_ANY = 1 << 30;

const DISPATCH_EITHER = BufferUsage.DISPATCH_STORAGE | BufferUsage.DISPATCH_UNIFORM;

/** True when `usage` (a buffer's bits) satisfies `required` (a requirement, possibly with DISPATCH_ANY). */
export function meetsUsage(usage: number, required: number): boolean {
  const all = required & ~DISPATCH_ANY;
  if ((usage & all) !== all) return false;
  return (required & DISPATCH_ANY) === 0 || (usage & DISPATCH_EITHER) !== 0;
}

/** "TRANSFER_TARGET and DISPATCH_STORAGE or DISPATCH_UNIFORM": a requirement as text, for messages. */
export function describeRequirement(required: number): string {
  const all = required & ~DISPATCH_ANY;
  const either = 'DISPATCH_STORAGE or DISPATCH_UNIFORM';
  if ((required & DISPATCH_ANY) === 0) return describeUsage(all);
  return all === 0 ? either : `${describeUsage(all)} and ${either}`;
}

/** Greatest common divisor of two positive integers. */
export function gcd(a: number, b: number): number {
  while (b !== 0) {
    const t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/** Least common multiple of two positive integers (alignments). */
export function lcm(a: number, b: number): number {
  return a === b ? a : (a / gcd(a, b)) * b;
}
