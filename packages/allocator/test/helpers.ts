import { KeelError } from '@keel/hal';
import type { Block, SlabProvider } from '../src/index';

/** A provider of plain ArrayBuffers that counts calls and can be told to fail. */
export class CountingProvider implements SlabProvider<ArrayBuffer> {
  created = 0;
  destroyed = 0;
  bytes = 0;
  fail = false;
  readonly live = new Set<ArrayBuffer>();

  createSlab(byteLength: number): ArrayBuffer {
    if (this.fail) throw new RangeError('out of memory (test)');
    const memory = new ArrayBuffer(byteLength);
    this.created++;
    this.bytes += byteLength;
    this.live.add(memory);
    return memory;
  }

  destroySlab(memory: ArrayBuffer): void {
    if (!this.live.delete(memory)) throw new Error('slab destroyed twice or unknown');
    this.destroyed++;
    this.bytes -= memory.byteLength;
  }
}

/** A counting provider whose slabs are resizable ArrayBuffers (up to `maxByteLength` each). */
export class ResizableCountingProvider extends CountingProvider {
  resizes = 0;
  constructor(readonly maxByteLength: number) {
    super();
  }

  override createSlab(byteLength: number): ArrayBuffer {
    if (this.fail) throw new RangeError('out of memory (test)');
    const memory = new ArrayBuffer(byteLength, { maxByteLength: Math.max(byteLength, this.maxByteLength) });
    this.created++;
    this.bytes += byteLength;
    this.live.add(memory);
    return memory;
  }

  resizeSlab(memory: ArrayBuffer, byteLength: number): boolean {
    if (!this.live.has(memory)) throw new Error('resize of an unknown slab');
    if (byteLength > memory.maxByteLength) return false;
    this.bytes += byteLength - memory.byteLength;
    memory.resize(byteLength);
    this.resizes++;
    return true;
  }
}

/** The code of a thrown KeelError, or a marker. */
export function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return KeelError.is(e) ? e.code : `not a KeelError: ${String(e)}`;
  }
  return undefined;
}

/** Describes the first overlap among blocks (same slab, intersecting ranges), or undefined. */
export function findOverlap<M>(blocks: readonly Block<M>[]): string | undefined {
  const sorted = [...blocks].sort((a, b) => a.slab.id - b.slab.id || a.offset - b.offset);
  for (let i = 1; i < sorted.length; i++) {
    const prev = sorted[i - 1] as Block<M>;
    const cur = sorted[i] as Block<M>;
    if (prev.slab === cur.slab && cur.offset < prev.offset + Math.max(1, prev.byteLength)) {
      return `slab ${cur.slab.id}: [${prev.offset}, +${prev.byteLength}) overlaps [${cur.offset}, +${cur.byteLength})`;
    }
  }
  return undefined;
}

/** Checks that a block lies inside its slab and is aligned. */
export function blockProblem<M>(block: Block<M>, alignment: number): string | undefined {
  if (block.offset % alignment !== 0) return `offset ${block.offset} is not a multiple of ${alignment}`;
  if (block.offset + block.byteLength > block.slab.byteLength) return `block leaves slab ${block.slab.id}`;
  return undefined;
}

/** `code: message` of what `fn` throws. */
export function thrown(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (KeelError.is(error)) return `${error.code}: ${error.message}`;
    return `not a KeelError: ${String(error)}`;
  }
  return 'nothing thrown';
}
