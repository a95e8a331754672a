/**
 * The kernel ABI of the CPU device: what a kernel function of a `js-module` executable receives.
 *
 * A kernel is a named export of an ES module, called once per workgroup:
 *
 * ```js
 * export function scale(ctx) {
 *   const data = ctx.bindings[0].f32;
 *   const [x] = ctx.workgroupId;
 *   const factor = ctx.constantsF32[0];
 *   for (let i = x * 64; i < Math.min(data.length, x * 64 + 64); i++) data[i] *= factor;
 * }
 * ```
 *
 * Ownership: the context, its arrays and its binding objects are owned by the device and reused
 * (workgroupId is rewritten for every workgroup, bindings for every dispatch). A kernel must not keep
 * any of them after it returns. Views (`f32`, `u32`, ...) are created lazily, once per dispatch per
 * worker, and cover exactly the binding's byte range.
 */
import { ErrorCode, KeelError } from '@keel/fence';

/** One binding of a dispatch: a byte range of device memory with lazily created typed views. */
export interface KernelBinding {
  /** The memory the range lives in (a SharedArrayBuffer in task mode). */
  readonly buffer: ArrayBufferLike;
  /** Start of the range in `buffer`. */
  readonly byteOffset: number;
  /** Length of the range in bytes. */
  readonly byteLength: number;
  /** The range as bytes. */
  readonly u8: Uint8Array;
  /** The range as i32 elements (floor(byteLength / 4)); the offset must be 4-byte aligned. */
  readonly i32: Int32Array;
  /** The range as u32 elements (floor(byteLength / 4)); the offset must be 4-byte aligned. */
  readonly u32: Uint32Array;
  /** The range as f32 elements (floor(byteLength / 4)); the offset must be 4-byte aligned. */
  readonly f32: Float32Array;
  /** The range as f64 elements (floor(byteLength / 8)); the offset must be 8-byte aligned. */
  readonly f64: Float64Array;
  /** The range as a DataView (any alignment, explicit endianness). */
  readonly view: DataView;
}

/** What a kernel receives for each workgroup. */
export interface KernelContext {
  /** This workgroup's id, each component below the matching `workgroupCount` component. */
  readonly workgroupId: readonly [x: number, y: number, z: number];
  /** The dispatch's workgroup count. */
  readonly workgroupCount: readonly [x: number, y: number, z: number];
  /** The export's declared workgroup size (the kernel loops over it itself). */
  readonly workgroupSize: readonly [x: number, y: number, z: number];
  /** One entry per binding of the export, in order. */
  readonly bindings: readonly KernelBinding[];
  /** The dispatch's 32-bit constants. */
  readonly constants: Uint32Array;
  /** The same constants bit-cast to f32. */
  readonly constantsF32: Float32Array;
  /** Index of the thread running this workgroup within its queue (0 in sync mode). */
  readonly workerIndex: number;
}

/**
 * A kernel function. Throwing fails the dispatch's submission with the error (INTERNAL). A kernel may be
 * async: the workgroup counts as done when its promise settles (a rejection fails the submission like a
 * throw), and its thread runs no other workgroup meanwhile, so `context` stays valid across awaits.
 */
export type Kernel = (context: KernelContext) => void | PromiseLike<void>;

/**
 * The device's implementation of KernelBinding: one object per binding index per worker, re-pointed
 * at each dispatch (`reset`), with views cached until the next reset.
 */
type View = Uint8Array | Int32Array | Uint32Array | Float32Array | Float64Array | DataView;
type ViewClass = {
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): View;
  BYTES_PER_ELEMENT?: number;
};

export class KernelBindingSlot implements KernelBinding {
  buffer: ArrayBufferLike = new ArrayBuffer(0);
  byteOffset = 0;
  byteLength = 0;
  // TypeScript-private, not `#private`: a kernel may hand a binding on through a Proxy.
  /** Views made since the last reset, by kind (u8, i32, u32, f32, f64, view). */
  private readonly views: (View | undefined)[] = [];

  declare readonly index: number;

  constructor(index: number) {
    this.index = index;
  }

  /** Points the slot at a new range and drops cached views (unless the range is unchanged). */
  reset(buffer: ArrayBufferLike, byteOffset: number, byteLength: number): void {
    if (buffer === this.buffer && byteOffset === this.byteOffset && byteLength === this.byteLength) return;
    this.buffer = buffer;
    this.byteOffset = byteOffset;
    this.byteLength = byteLength;
    this.views.fill(undefined);
  }

  /** The cached view of kind `kind` (made on first use): whole elements of the range, aligned start. */
  private as<V extends View>(kind: number, View: ViewClass, name: string): V {
    let view = this.views[kind];
    if (!view) {
      const bytes = View.BYTES_PER_ELEMENT ?? 1;
      if (this.byteOffset % bytes !== 0) {
        throw new KeelError(
          ErrorCode.INVALID_ARGUMENT,
          `kernel binding ${this.index}: offset ${this.byteOffset} is not a multiple of ${bytes}, cannot view it as ${name}`,
        );
      }
      view = new View(this.buffer, this.byteOffset, (this.byteLength / bytes) | 0);
      this.views[kind] = view;
    }
    return view as V;
  }

  get u8(): Uint8Array {
    return this.as(0, Uint8Array, 'u8');
  }
  get i32(): Int32Array {
    return this.as(1, Int32Array, 'i32');
  }
  get u32(): Uint32Array {
    return this.as(2, Uint32Array, 'u32');
  }
  get f32(): Float32Array {
    return this.as(3, Float32Array, 'f32');
  }
  get f64(): Float64Array {
    return this.as(4, Float64Array, 'f64');
  }
  get view(): DataView {
    return this.as(5, DataView, 'view');
  }
}
