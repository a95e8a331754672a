/**
 * Bit sets describing what a buffer may be used for and what memory backs it. Commands check the usage
 * they need against these bits at record time (direct refs) or submission time (binding-table slots).
 */

/** What a buffer may be used for; combine with `|`. */
export const BufferUsage = {
  NONE: 0,
  /** Source of copies and reads back to the host. */
  TRANSFER_SOURCE: 1 << 0,
  /** Target of fills, updates, copies and writes from the host. */
  TRANSFER_TARGET: 1 << 1,
  /** Bound as a read-write storage binding of a dispatch. */
  DISPATCH_STORAGE: 1 << 2,
  /** Bound as a uniform binding of a dispatch. */
  DISPATCH_UNIFORM: 1 << 3,
  /** Holds the 12-byte x, y, z workgroup count of an indirect dispatch. */
  DISPATCH_INDIRECT_PARAMETERS: 1 << 4,
  /** May be mapped into host memory. */
  MAPPING: 1 << 5,
  /** TRANSFER_SOURCE | TRANSFER_TARGET. */
  TRANSFER: (1 << 0) | (1 << 1),
  /** Everything a compute buffer normally needs: transfers and storage. */
  DEFAULT: (1 << 0) | (1 << 1) | (1 << 2),
} as const;
export type BufferUsage = number;

/** What memory backs a buffer; combine with `|`. */
export const MemoryType = {
  NONE: 0,
  DEVICE_LOCAL: 1 << 0,
  HOST_VISIBLE: 1 << 1,
  HOST_COHERENT: 1 << 2,
  HOST_CACHED: 1 << 3,
} as const;
export type MemoryType = number;

/** Every defined BufferUsage bit (a usage with any other bit is refused). */
export const ALL_USAGE_BITS = 0x3f;
/** Every defined MemoryType bit. */
export const ALL_MEMORY_BITS = 0xf;

const USAGE_NAMES: readonly (readonly [number, string])[] = [
  [BufferUsage.TRANSFER_SOURCE, 'TRANSFER_SOURCE'],
  [BufferUsage.TRANSFER_TARGET, 'TRANSFER_TARGET'],
  [BufferUsage.DISPATCH_STORAGE, 'DISPATCH_STORAGE'],
  [BufferUsage.DISPATCH_UNIFORM, 'DISPATCH_UNIFORM'],
  [BufferUsage.DISPATCH_INDIRECT_PARAMETERS, 'DISPATCH_INDIRECT_PARAMETERS'],
  [BufferUsage.MAPPING, 'MAPPING'],
];

const MEMORY_NAMES: readonly (readonly [number, string])[] = [
  [MemoryType.DEVICE_LOCAL, 'DEVICE_LOCAL'],
  [MemoryType.HOST_VISIBLE, 'HOST_VISIBLE'],
  [MemoryType.HOST_COHERENT, 'HOST_COHERENT'],
  [MemoryType.HOST_CACHED, 'HOST_CACHED'],
];

function describeBits(bits: number, names: readonly (readonly [number, string])[]): string {
  const parts = names.filter(([bit]) => (bits & bit) !== 0).map(([, name]) => name);
  return parts.length === 0 ? 'NONE' : parts.join('|');
}

/** "TRANSFER_SOURCE|DISPATCH_STORAGE": usage bits as text, for error messages. */
export function describeUsage(usage: BufferUsage): string {
  return describeBits(usage, USAGE_NAMES);
}

/** "DEVICE_LOCAL|HOST_VISIBLE": memory type bits as text, for error messages. */
export function describeMemoryType(memoryType: MemoryType): string {
  return describeBits(memoryType, MEMORY_NAMES);
}

/** True when every bit of `required` is set in `bits`. */
export function hasAllBits(bits: number, required: number): boolean {
  return (bits & required) === required;
}
