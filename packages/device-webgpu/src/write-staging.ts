/**
 * The staging of `queueWrite`: one device-wide GPUBuffer (COPY_SRC | COPY_DST, never mapped) that
 * each write of the open submission batch puts its bytes into, with `queue.writeBuffer`, at a region
 * of its own; the batch then copies region → target in command order (op-runner.ts), so the write
 * keeps its place between the batch's other commands. Nothing is mapped, so nothing is asynchronous:
 * no `mapAsync` per write, no callback, nothing to settle at teardown.
 *
 * Regions need no completion tracking: WebGPU runs `queue.writeBuffer` and submissions in queue order
 * (the rule uniform-ring.ts relies on too), so a region written after a batch was submitted is written
 * after that batch's copies read it. Regions therefore restart at 0 with every batch (`submitted`),
 * and within one batch they never overlap (a bump offset, 4-byte aligned).
 *
 * Bounds: the buffer grows (a power of two, from 64 KiB) to what a batch needs, up to WRITE_CHUNK
 * (16 MiB). A region that no longer fits below that cap is refused (`reserve` returns -1): the runner
 * then submits what the batch encoded so far and reserves again from 0. Writes larger than the cap
 * are split into chunks of at most WRITE_CHUNK bytes. An outgrown buffer is destroyed once the batch
 * that may still copy from it was submitted (WebGPU frees it after the work queued before completes).
 * When a batch with writes fails on the GPU, the buffer is replaced (`discard`): a creation that ran
 * out of memory gives an invalid buffer, and keeping it would fail every later write.
 *
 * Bytes are placed at byte 0 of their region (the copy kernel takes any source and target byte phase);
 * `writeBuffer` moves whole words, so a length that is not a multiple of 4 writes its last 1-3 bytes
 * through a kept 4-byte bounce buffer. Sources over a SharedArrayBuffer (which Dawn refuses, or crashes
 * on) go through that bounce buffer whole, grown to the chunk. Nothing is allocated per write once
 * the buffers are large enough.
 */
import { growTypedArray } from '@keel/hal/driver';
import { type ErrorScopes, inOwnScopes } from './gpu-errors';
import { USAGE_COPY_DST, USAGE_COPY_SRC } from './gpu-flags';

/** The staging buffer's largest size; writes are split into chunks of at most this many bytes. */
export const WRITE_CHUNK = 16 * 1024 * 1024;
const MIN_SIZE = 64 * 1024;

/** Counters of `queueWrite`'s staging (WebGpuDeviceStats.upload; names kept from the pooled design). */
export interface UploadPoolStats {
  /** Staging buffers created (the first one, and one per growth). */
  readonly created: number;
  /** Regions (write chunks) staged in a buffer that already existed. */
  readonly reused: number;
  /** Staging buffers destroyed (outgrown, teardown). */
  readonly destroyed: number;
  /** Staging buffers held now: 1 once a write ran, 0 after `destroy()`. */
  readonly free: number;
  /** Always 0: the staging buffer is never mapped. */
  readonly remapping: number;
  /** Bytes of the staging buffer held now (at most 16 MiB). */
  readonly keptBytes: number;
}

export class WriteStaging {
  readonly #device: GPUDevice;
  readonly #scopes: ErrorScopes;
  #buffer: GPUBuffer | undefined;
  /**
   * The staging buffer once its creation is known to have succeeded: `writeBuffer` into it, at a
   * region `reserve` gave, cannot fail, so warm writes run without error scopes. Until then (and for a
   * buffer whose creation failed) each `put` is inside the operation's scopes.
   */
  #proven: GPUBuffer | undefined;
  #size = 0;
  /** The first free byte of the open batch's regions. */
  #cursor = 0;
  /** Outgrown buffers the open batch may still copy from (destroyed at `submitted`). */
  readonly #retired: GPUBuffer[] = [];
  /**
   * Host bytes Dawn is given instead of the source's: the last word of a length that is not a multiple
   * of 4, or a whole chunk whose source is a SharedArrayBuffer.
   */
  #bounce = new Uint8Array(4);
  #created = 0;
  #reused = 0;
  #destroyed = 0;

  constructor(device: GPUDevice, scopes: ErrorScopes) {
    this.#device = device;
    this.#scopes = scopes;
  }

  /** The staging buffer: read it after `reserve` (growth replaces it). */
  get buffer(): GPUBuffer {
    return this.#buffer as GPUBuffer;
  }

  /**
   * Reserves a region of `bytes` (≤ WRITE_CHUNK) bytes for the open batch and returns its byte offset,
   * or -1 when the batch's regions would pass WRITE_CHUNK: submit the batch, then reserve again.
   */
  reserve(bytes: number): number {
    const need = (bytes + 3) & ~3;
    const at = this.#cursor;
    if (at + need <= this.#size) {
      this.#cursor = at + need;
      this.#reused++;
      return at;
    }
    if (this.#size === WRITE_CHUNK) return -1;
    // Grow to what this batch needs in all; the new buffer's regions start at 0.
    let size = Math.max(MIN_SIZE, this.#size * 2);
    while (size < at + need && size < WRITE_CHUNK) size *= 2;
    if (this.#buffer !== undefined) this.#retired.push(this.#buffer);
    const device = this.#device;
    // Scopes of its own (balanced here, inside the operation's span): their result proves the buffer.
    const [buffer, errors] = inOwnScopes(device, () =>
      device.createBuffer({ label: 'keel write staging', size, usage: USAGE_COPY_SRC | USAGE_COPY_DST }),
    );
    errors.then((error) => {
      if (error === undefined && this.#buffer === buffer) this.#proven = buffer;
    });
    this.#buffer = buffer;
    this.#size = size;
    this.#created++;
    this.#cursor = need;
    return 0;
  }

  /** Puts `n` bytes of `bytes` from index `from` at byte 0 of `region` (ahead of the batch's commands). */
  put(region: number, bytes: Uint8Array, from: number, n: number): void {
    const queue = this.#device.queue;
    const buffer = this.#buffer as GPUBuffer;
    if (buffer !== this.#proven) this.#scopes.enter();
    const source = bytes.buffer;
    if (source[Symbol.toStringTag] === 'SharedArrayBuffer') {
      // Dawn takes no SharedArrayBuffer (it throws for one, and crashes on a view of one): bounce.
      const host = this.#host((n + 3) & ~3);
      host.set(bytes.subarray(from, from + n));
      queue.writeBuffer(buffer, region, host.buffer, 0, (n + 3) & ~3);
      return;
    }
    const body = n & ~3;
    if (body > 0) queue.writeBuffer(buffer, region, source, bytes.byteOffset + from, body);
    const tail = n & 3;
    if (tail > 0) {
      const host = this.#bounce;
      for (let i = 0; i < tail; i++) host[i] = bytes[from + body + i] as number;
      queue.writeBuffer(buffer, region + body, host.buffer, 0, 4);
    }
  }

  /** The bounce buffer, at least `bytes` long (grown by powers of two; kept). */
  #host(bytes: number): Uint8Array {
    if (this.#bounce.length < bytes) this.#bounce = growTypedArray(this.#bounce, 0, bytes);
    return this.#bounce;
  }

  /**
   * A batch that staged writes failed on the GPU: its staging buffer may be the invalid object a failed
   * creation (out of memory) gives, which would fail every later write, so later writes get a new one
   * (the old one is destroyed with the outgrown ones).
   */
  discard(): void {
    if (this.#buffer === undefined) return;
    this.#retired.push(this.#buffer);
    this.#buffer = undefined;
    this.#proven = undefined;
    this.#size = 0;
  }

  /** The open batch was submitted or dropped: regions restart at 0; outgrown buffers are destroyed. */
  submitted(): void {
    this.#cursor = 0;
    const retired = this.#retired;
    for (let i = 0; i < retired.length; i++) (retired[i] as GPUBuffer).destroy();
    this.#destroyed += retired.length;
    retired.length = 0;
  }

  /** GPUBuffers alive (0 after `destroy`). */
  get live(): number {
    return (this.#buffer === undefined ? 0 : 1) + this.#retired.length;
  }

  get stats(): UploadPoolStats {
    return {
      created: this.#created,
      reused: this.#reused,
      destroyed: this.#destroyed,
      free: this.#buffer === undefined ? 0 : 1,
      remapping: 0,
      keptBytes: this.#buffer === undefined ? 0 : this.#size,
    };
  }

  /** Destroys the staging buffers (teardown, after the GPU work settled). Idempotent. */
  destroy(): void {
    if (this.#buffer !== undefined) {
      this.#buffer.destroy();
      this.#buffer = undefined;
      this.#proven = undefined;
      this.#size = 0;
      this.#destroyed++;
    }
    this.submitted();
  }
}
