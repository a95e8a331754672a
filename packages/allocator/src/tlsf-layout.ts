/**
 * The layout of TlsfPool's bookkeeping (internal), shared by the pool (tlsf-pool.ts) and its invariant
 * check (tlsf-invariants.ts):
 *
 * - Size classes: a free range of `units` alignment units is filed under class `fl * SL_COUNT + sl`,
 *   where the first level `fl` is its power of two (class 0 holds sizes below SL_COUNT units, one unit
 *   per second-level class) and the second level `sl` one of SL_COUNT linear subdivisions of it. Each
 *   heap has CLASSES free lists, one bitmap word per first-level class and one first-level word.
 * - Nodes: a range of a slab, free or used, is eight int32 fields in one array (`node << 3` is its base
 *   index): OFFSET and SIZE in alignment units, SLAB (its index), the physical and free-list links, and
 *   FLAGS (FREE, USED, HELD for a quarantined block's node, 0 for a recycled node).
 *
 * Promises: `classOf(units)` is the class a free range of `units` units is filed under;
 * `searchClassOf(units)` is the smallest class whose every range (and every range of the classes above
 * it) holds `units` units, its first level FL_COUNT or more when no class can. Both are O(1).
 */

export const SL_LOG2 = 5;
export const SL_COUNT = 1 << SL_LOG2;
/** First-level classes: 0 holds sizes below SL_COUNT units (linear), then one per power of two. */
export const FL_COUNT = 32 - SL_LOG2 + 1;
export const CLASSES = FL_COUNT * SL_COUNT;
export const HEAPS = 2;
export const LARGE = 0;
export const SMALL = 1;
/** The most alignment units a slab (and so a node) spans. */
export const MAX_UNITS = 0x7fffffff;

// Node flags.
export const FREE = 1;
export const USED = 2;
/** Used for good: the node of a quarantined block. */
export const HELD = 3;

// Fields of a node.
export const OFFSET = 0;
export const SIZE = 1;
export const SLAB = 2;
export const PREV_PHYS = 3;
export const NEXT_PHYS = 4;
export const PREV_FREE = 5;
export const NEXT_FREE = 6;
export const FLAGS = 7;

/** The class index (fl * SL_COUNT + sl) a free range of `units` units is filed under. */
export function classOf(units: number): number {
  if (units < SL_COUNT) return units;
  const f = 31 - Math.clz32(units);
  return ((f - SL_LOG2 + 1) << SL_LOG2) | ((units >>> (f - SL_LOG2)) & (SL_COUNT - 1));
}

/** The smallest class index whose every range holds `units` units (TLSF's rounded-up search). */
export function searchClassOf(units: number): number {
  if (units < SL_COUNT) return units;
  const f = 31 - Math.clz32(units);
  return classOf(units + (1 << (f - SL_LOG2)) - 1);
}
