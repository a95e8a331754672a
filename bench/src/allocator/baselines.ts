/**
 * Pools the way other ML runtimes pool device buffers, for comparison on the same traces:
 *
 * - ExactSizeFreeLists (TensorFlow.js's WebGPU/WebGL buffer managers): a freed buffer goes to the free
 *   list of its exact byte size and is reused only by a request of exactly that size; otherwise a new
 *   buffer is created. Buffers are kept until disposal.
 * - PowerOfTwoBuckets (ONNX Runtime Web's GPU data manager, simplified): a request is rounded up to the
 *   next power of two and served from that bucket's free list, else a new buffer of the bucket size.
 *
 * Both count the bytes of every buffer they hold (`reservedBytes`) and its peak; neither ever gives
 * memory back, as their models do until the session ends.
 */

export interface BaselinePool {
  readonly name: string;
  alloc(size: number): number;
  free(handle: number): void;
  readonly reservedBytes: number;
  readonly peakReservedBytes: number;
}

abstract class FreeListPool implements BaselinePool {
  abstract readonly name: string;
  reservedBytes = 0;
  peakReservedBytes = 0;
  readonly #free = new Map<number, number[]>();
  readonly #sizeOf: number[] = [];
  #next = 0;

  protected abstract bucketOf(size: number): number;

  alloc(size: number): number {
    const bucket = this.bucketOf(size);
    const list = this.#free.get(bucket);
    if (list !== undefined && list.length > 0) return list.pop() as number;
    const handle = this.#next++;
    this.#sizeOf[handle] = bucket;
    this.reservedBytes += bucket;
    if (this.reservedBytes > this.peakReservedBytes) this.peakReservedBytes = this.reservedBytes;
    return handle;
  }

  free(handle: number): void {
    const bucket = this.#sizeOf[handle] as number;
    let list = this.#free.get(bucket);
    if (list === undefined) {
      list = [];
      this.#free.set(bucket, list);
    }
    list.push(handle);
  }
}

export class ExactSizeFreeLists extends FreeListPool {
  readonly name = 'exact-size free lists (TF.js style)';
  protected bucketOf(size: number): number {
    return Math.max(size, 4);
  }
}

export class PowerOfTwoBuckets extends FreeListPool {
  readonly name = 'power-of-two buckets (ORT Web style)';
  protected bucketOf(size: number): number {
    return size <= 16 ? 16 : 2 ** Math.ceil(Math.log2(size));
  }
}
