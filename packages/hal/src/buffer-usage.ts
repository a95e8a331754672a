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

/** The names of the single bits set in `bits`, in the table's order ('NONE' when none). */
function describeBits(bits: number, table: Readonly<Record<string, number>>): string {
  // Single bits only: a table's NONE (0) and its combinations (TRANSFER, DEFAULT) are not named.
  const parts = Object.keys(table).filter((name) => {
    const bit = table[name] as number;
    return (bits & bit) !== 0 && (bit & (bit - 1)) === 0;
  });
  return parts.length === 0 ? 'NONE' : parts.join('|');
}

/** "TRANSFER_SOURCE|DISPATCH_STORAGE": usage bits as text, for error messages. */
export function describeUsage(usage: BufferUsage): string {
  return describeBits(usage, BufferUsage);
}

/** "DEVICE_LOCAL|HOST_VISIBLE": memory type bits as text, for error messages. */
export function describeMemoryType(memoryType: MemoryType): string {
  return describeBits(memoryType, MemoryType);
}

/** True when every bit of `required` is set in `bits`. */
export function hasAllBits(bits: number, required: number): boolean {
  return (bits & required) === required;
}
