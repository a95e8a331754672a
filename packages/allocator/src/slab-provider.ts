/**
 * Slab providers: where pools get their memory. A pool asks its provider for large slabs and hands out
 * blocks (ranges) of them; the provider decides what a slab is (an ArrayBuffer, a SharedArrayBuffer, a
 * GPUBuffer, ...). Providers are called only when a pool grows, trims or is destroyed, never per block.
 * The two providers here take `{ maxByteLength? }` (checked by checkOptions: unknown keys, a value that
 * is not a positive safe integer are INVALID_ARGUMENT naming the provider).
 */
import { checkOptions, type OptionRules } from '@keel/hal';

/**
 * Creates and destroys slabs of memory of type `M`.
 *
 * - `createSlab(byteLength)` returns fresh memory of at least `byteLength` bytes (a multiple of the
 *   pool's alignment). It may throw (out of memory, a limit of the platform): the pool turns that into a
 *   RESOURCE_EXHAUSTED KeelError whose cause is the thrown value.
 * - `destroySlab(memory)` is called exactly once per created slab, when the pool gives it back (trim,
 *   a passthrough release, destroy). The pool never touches the memory afterwards, even if it throws
 *   (the pool then reports INTERNAL, cause the thrown value, and counts the slab as given back).
 * - `resizeSlab(memory, byteLength)` (optional) resizes a slab in place, keeping its contents and its
 *   identity (views of it stay valid): IREE's "reserve address space, commit as needed" on the CPU. It
 *   returns false when it cannot (past the reserved maximum, or shrinking where only growth is
 *   possible). A TlsfPool over a resizable provider grows its slabs by what it needs instead of adding
 *   whole slabs, which keeps its peak footprint close to the peak of live bytes.
 */
export interface SlabProvider<M> {
  createSlab(byteLength: number): M;
  destroySlab(memory: M): void;
  resizeSlab?(memory: M, byteLength: number): boolean;
}

/** The options of both providers. */
const SLAB_OPTION_RULES: OptionRules = { maxByteLength: { type: 'integer', min: 1 } };

export interface ResizableSlabOptions {
  /**
   * Makes slabs resizable in place up to this many bytes each (ES2024 resizable ArrayBuffer / growable
   * SharedArrayBuffer; the platform reserves the address space, memory is committed as it grows).
   * Typed-array views of resizable buffers may be slower on some engines, so it is opt-in.
   */
  readonly maxByteLength?: number;
}

/** Slabs of ordinary ArrayBuffer memory (zero-filled by the platform); destroy drops the reference. */
export class ArrayBufferSlabProvider implements SlabProvider<ArrayBuffer> {
  readonly maxByteLength: number | undefined;
  /** Present only when slabs are resizable (absent, not `undefined`: `exactOptionalPropertyTypes`). */
  declare readonly resizeSlab?: (memory: ArrayBuffer, byteLength: number) => boolean;

  constructor(options?: ResizableSlabOptions) {
    this.maxByteLength = checkOptions<ResizableSlabOptions>(
      'ArrayBufferSlabProvider',
      options,
      SLAB_OPTION_RULES,
    ).maxByteLength;
    if (this.maxByteLength !== undefined) this.resizeSlab = resizeArrayBuffer;
  }

  createSlab(byteLength: number): ArrayBuffer {
    const max = this.maxByteLength;
    if (max === undefined || byteLength > max) return new ArrayBuffer(byteLength);
    return new ArrayBuffer(byteLength, { maxByteLength: max });
  }

  destroySlab(_memory: ArrayBuffer): void {
    // Garbage collected once the last view goes away.
  }
}

function resizeArrayBuffer(memory: ArrayBuffer, byteLength: number): boolean {
  if (!memory.resizable || byteLength > memory.maxByteLength) return false;
  memory.resize(byteLength);
  return true;
}

/**
 * Slabs of SharedArrayBuffer memory, for the CPU device's worker threads (needs cross-origin isolation in
 * browsers). Destroy drops the reference. With `maxByteLength`, slabs are growable (never shrink).
 */
export class SharedArrayBufferSlabProvider implements SlabProvider<SharedArrayBuffer> {
  readonly maxByteLength: number | undefined;
  /** Present only when slabs are resizable (absent, not `undefined`: `exactOptionalPropertyTypes`). */
  declare readonly resizeSlab?: (memory: SharedArrayBuffer, byteLength: number) => boolean;

  constructor(options?: ResizableSlabOptions) {
    this.maxByteLength = checkOptions<ResizableSlabOptions>(
      'SharedArrayBufferSlabProvider',
      options,
      SLAB_OPTION_RULES,
    ).maxByteLength;
    if (this.maxByteLength !== undefined) this.resizeSlab = growSharedArrayBuffer;
  }

  createSlab(byteLength: number): SharedArrayBuffer {
    const max = this.maxByteLength;
    if (max === undefined || byteLength > max) return new SharedArrayBuffer(byteLength);
    return new SharedArrayBuffer(byteLength, { maxByteLength: max });
  }

  destroySlab(_memory: SharedArrayBuffer): void {
    // Garbage collected once every thread dropped its views.
  }
}

function growSharedArrayBuffer(memory: SharedArrayBuffer, byteLength: number): boolean {
  if (!memory.growable || byteLength > memory.maxByteLength || byteLength < memory.byteLength) return false;
  memory.grow(byteLength);
  return true;
}
