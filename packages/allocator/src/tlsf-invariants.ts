/**
 * The invariants of a TlsfPool's bookkeeping (internal; `TlsfPool.checkInvariants`, for tests): nodes
 * tile each slab without gaps or overlaps, first/last and physical links are right, no two free nodes
 * are adjacent, a slab's live count is its used and held nodes, the slabs' bytes are the pool's
 * reserved bytes, every free node is in the list of its heap and class and the bitmaps match the lists.
 *
 * Promises: reads the pool's state and changes nothing; throws INTERNAL "<pool>: invariant broken:
 * <rule>" at the first broken rule. Walks every node and class: O(nodes + classes), never on a hot path.
 */
import { ErrorCode, KeelError } from '@keel/hal';
import type { SlabRecord } from './pool-support';
import {
  CLASSES,
  classOf,
  FL_COUNT,
  FLAGS,
  FREE,
  HEAPS,
  HELD,
  NEXT_FREE,
  NEXT_PHYS,
  OFFSET,
  PREV_FREE,
  PREV_PHYS,
  SIZE,
  SL_COUNT,
  SL_LOG2,
  SLAB,
  USED,
} from './tlsf-layout';

/** A TlsfPool's state as the check reads it: the pool's own arrays (tlsf-layout.ts), not copies. */
export interface TlsfState<M> {
  /** Names the pool in messages ("TlsfPool 'label'"). */
  readonly what: string;
  readonly alignment: number;
  /** The pool's counted reserved bytes. */
  readonly reservedBytes: number;
  /** Eight int32 fields per node. */
  readonly nodes: Int32Array;
  /** The heap of each node. */
  readonly nodeHeaps: Uint8Array;
  /** Per heap and class: the first free node of its list, or -1. */
  readonly heads: Int32Array;
  /** Per heap: which first-level classes have a non-empty second-level class. */
  readonly flBitmap: Int32Array;
  /** Per heap and first-level class: which of its classes have a free node. */
  readonly slBitmap: Int32Array;
  /** Slabs by index (holes undefined). */
  readonly slabs: readonly (SlabRecord<M> | undefined)[];
}

/** Throws INTERNAL naming the first invariant of `state` that is broken. */
export function checkTlsfInvariants<M>(state: TlsfState<M>): void {
  const { nodes: n, nodeHeaps, heads, flBitmap, slBitmap, alignment } = state;
  const fail = (rule: string): never => {
    throw new KeelError(ErrorCode.INTERNAL, `${state.what}: invariant broken: ${rule}`);
  };
  let freeNodes = 0;
  let reserved = 0;
  state.slabs.forEach((slab, index) => {
    if (!slab) return;
    const s = `slab ${slab.id}: `;
    reserved += slab.byteLength;
    let expected = 0;
    let prev = -1;
    let live = 0;
    for (let node = slab.first; node >= 0; node = n[(node << 3) + NEXT_PHYS] as number) {
      const at = node << 3;
      if (n[at + PREV_PHYS] !== prev) fail(`${s}node ${node} has a wrong previous link`);
      if (n[at + OFFSET] !== expected) fail(`${s}gap or overlap at unit ${expected}`);
      if (n[at + SLAB] !== index || nodeHeaps[node] !== slab.heap)
        fail(`${s}node ${node} names the wrong slab or heap`);
      const flags = n[at + FLAGS];
      if (flags === FREE) {
        freeNodes++;
        if (prev >= 0 && n[(prev << 3) + FLAGS] === FREE) fail(`${s}adjacent free nodes`);
      } else if (flags === USED || flags === HELD) live++;
      else fail(`${s}recycled node ${node} is linked`);
      expected += n[at + SIZE] as number;
      prev = node;
    }
    if (prev !== slab.last) fail(`${s}wrong last node`);
    if (expected * alignment !== slab.byteLength) fail(`${s}nodes do not cover the slab`);
    if (live !== slab.live) fail(`${s}live count ${slab.live}, found ${live}`);
  });
  if (reserved !== state.reservedBytes) fail(`slabs hold ${reserved} bytes, stats say otherwise`);
  for (let heap = 0; heap < HEAPS; heap++) {
    for (let cls = 0; cls < CLASSES; cls++) {
      const c = `heap ${heap} class ${cls}: `;
      const fl = cls >>> SL_LOG2;
      let prev = -1;
      let node = heads[heap * CLASSES + cls] as number;
      if (
        (node >= 0 ? 1 : 0) !==
        (((slBitmap[heap * FL_COUNT + fl] as number) >>> (cls & (SL_COUNT - 1))) & 1)
      )
        fail(`${c}bitmap disagrees with its list`);
      for (; node >= 0; node = n[(node << 3) + NEXT_FREE] as number) {
        const at = node << 3;
        freeNodes--;
        if (n[at + FLAGS] !== FREE || nodeHeaps[node] !== heap || classOf(n[at + SIZE] as number) !== cls)
          fail(`${c}node ${node} is not free or in the wrong list`);
        if (n[at + PREV_FREE] !== prev) fail(`${c}wrong free-list back link`);
        prev = node;
      }
      if ((((flBitmap[heap] as number) >>> fl) & 1) !== (slBitmap[heap * FL_COUNT + fl] ? 1 : 0))
        fail(`heap ${heap}: first-level bitmap disagrees at ${fl}`);
    }
  }
  if (freeNodes !== 0) fail(`free nodes and listed nodes differ by ${freeNodes}`);
}
