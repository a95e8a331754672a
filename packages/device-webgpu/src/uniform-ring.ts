/**
 * The uniform ring: where dispatch constants, built-in kernel parameters and staged `update` payloads
 * (copied from the ring in command order) live on the GPU. Each
 * dispatch with constants binds group 1 = [ring, dynamic offset]; the one bind group per ring buffer is
 * shared by every pipeline.
 *
 * Encoding reserves spans (`reserve`) and writes them into a host mirror; `flush` uploads everything
 * reserved since the last flush with `queue.writeBuffer` (one or two calls) right before the submit
 * that reads it. Reuse needs no completion tracking: WebGPU runs `writeBuffer` and submissions in queue
 * order, so overwriting a span (after the cursor wrapped) happens after every earlier submission read
 * it. One submission never wraps onto its own spans: if it needs more than the ring holds, the ring
 * grows (a new GPUBuffer; the old one is destroyed after the submission, which WebGPU keeps alive until
 * that work completes).
 *
 * A ring buffer is created inside error scopes of its own. One whose creation failed (out of memory)
 * is invalid: work bound to it before the failure was known fails with its batch's GPU error, and the
 * next submission's first reservation replaces it with a new buffer of the same capacity (before, the
 * ring stayed broken and every later operation that used it failed).
 */
import { CONSTANTS_WINDOW_BYTES } from './device-info';
import { type ErrorScopes, inOwnScopes } from './gpu-errors';
import { USAGE_COPY_DST, USAGE_COPY_SRC, USAGE_UNIFORM } from './gpu-flags';
import { alignUp } from './gpu-memory';
import type { TrackWork } from './pending-work';

const INITIAL_CAPACITY = 256 * 1024;

export class UniformRing {
  readonly #device: GPUDevice;
  readonly #scopes: ErrorScopes;
  readonly #layout: GPUBindGroupLayout;

  declare readonly alignment: number;
  // Set by #allocate (from the constructor on).
  #capacity = 0;
  #buffer!: GPUBuffer;
  #mirror!: Uint32Array;
  #bytes!: Uint8Array;
  #bindGroup!: GPUBindGroup;
  /** Next free byte. */
  #cursor = 0;
  /** First byte reserved since the last flush (not uploaded yet). */
  #pendingStart = 0;
  /** First byte the current submission reserved; -1 before its first reservation. */
  #submissionStart = -1;
  /** The current submission's spans wrapped around the end of the ring. */
  #wrapped = false;
  #retired: GPUBuffer[] = [];
  #destroyed = false;
  /** The current ring buffer's creation failed: the next submission replaces it. */
  #broken = false;
  readonly #track: TrackWork | undefined;

  constructor(
    device: GPUDevice,
    layout: GPUBindGroupLayout,
    alignment: number,
    scopes: ErrorScopes,
    /** Counts the creation scopes' pops as pending GPU work (the device's teardown waits for them). */
    track?: TrackWork,
  ) {
    this.#device = device;
    this.#scopes = scopes;
    this.#track = track;
    this.#layout = layout;
    this.alignment = Math.max(4, alignment);
    this.#allocate(INITIAL_CAPACITY);
  }

  /** Makes a ring GPUBuffer of `capacity` bytes, its host mirror and its bind group (the current ones). */
  #allocate(capacity: number): void {
    const device = this.#device;
    const [buffer, errors] = inOwnScopes(
      device,
      () => {
        const made = device.createBuffer({
          label: 'keel uniform ring',
          size: capacity,
          usage: USAGE_UNIFORM | USAGE_COPY_DST | USAGE_COPY_SRC,
        });
        this.#bindGroup = device.createBindGroup({
          layout: this.#layout,
          entries: [{ binding: 0, resource: { buffer: made, offset: 0, size: CONSTANTS_WINDOW_BYTES } }],
        });
        return made;
      },
      this.#track,
    );
    errors.then((error) => {
      if (error !== undefined && buffer === this.#buffer) this.#broken = true;
    });
    this.#capacity = capacity;
    this.#buffer = buffer;
    if (this.#mirror?.length !== capacity / 4) {
      this.#mirror = new Uint32Array(capacity / 4);
      this.#bytes = new Uint8Array(this.#mirror.buffer);
    }
  }

  /** The bind group of the current ring buffer (changes when the ring grows: read it after `reserve`). */
  get bindGroup(): GPUBindGroup {
    return this.#bindGroup;
  }

  /** The host mirror: write reserved spans here (as u32, index = byte offset / 4). */
  get mirror(): Uint32Array {
    return this.#mirror;
  }

  /** The host mirror as bytes (same memory as `mirror`). */
  get bytes(): Uint8Array {
    return this.#bytes;
  }

  /** The current ring GPUBuffer (a copy source for staged update payloads). */
  get buffer(): GPUBuffer {
    return this.#buffer;
  }

  get capacity(): number {
    return this.#capacity;
  }

  /**
   * Reserves `bytes` bytes (plus a constants window of slack behind them) and returns the span's byte
   * offset, a multiple of the uniform offset alignment.
   */
  reserve(bytes: number): number {
    if (this.#broken && this.#submissionStart < 0) this.#replace();
    const need = bytes + CONSTANTS_WINDOW_BYTES;
    let offset = alignUp(this.#cursor, this.alignment);
    const start = this.#submissionStart;
    // After this submission wrapped, its own spans begin at `start`: the cursor must stay below it.
    const limit = this.#wrapped ? start : this.#capacity;
    if (offset + need > limit) {
      if (!this.#wrapped && (start < 0 || need <= start)) {
        this.#upload(this.#pendingStart, this.#cursor);
        this.#pendingStart = 0;
        offset = 0;
        if (start >= 0) this.#wrapped = true;
      } else {
        this.#grow(need + (this.#wrapped ? this.#capacity : this.#cursor - Math.max(0, start)));
        offset = 0;
      }
    }
    if (offset + need > this.#capacity) {
      this.#grow(need);
      offset = 0;
    }
    if (this.#submissionStart < 0) this.#submissionStart = offset;
    this.#cursor = offset + bytes;
    return offset;
  }

  #grow(atLeast: number): void {
    // Growing uploads, creates a buffer and a bind group while an operation encodes.
    this.#scopes.enter();
    this.#upload(this.#pendingStart, this.#cursor);
    this.#retired.push(this.#buffer);
    let capacity = this.#capacity * 2;
    while (capacity < atLeast * 2) capacity *= 2;
    this.#allocate(capacity);
    this.#cursor = 0;
    this.#pendingStart = 0;
    this.#submissionStart = 0;
    this.#wrapped = false;
  }

  /** Replaces a ring buffer whose creation failed (at a submission's first reservation). */
  #replace(): void {
    this.#scopes.enter();
    this.#broken = false;
    this.#retired.push(this.#buffer);
    this.#allocate(this.#capacity);
    this.#cursor = 0;
    this.#pendingStart = 0;
    this.#wrapped = false;
  }

  #upload(from: number, to: number): void {
    if (to <= from) return;
    const start = from & ~3;
    const end = alignUp(to, 4);
    this.#device.queue.writeBuffer(this.#buffer, start, this.#mirror.buffer, start, end - start);
  }

  /** Uploads what was reserved since the last flush; call right before the submit that reads it. */
  flush(): void {
    this.#upload(this.#pendingStart, this.#cursor);
    this.#pendingStart = this.#cursor;
  }

  /** Ends a submission: the next reservation may wrap over its spans. Destroys retired ring buffers. */
  submitted(): void {
    this.#submissionStart = -1;
    this.#wrapped = false;
    if (this.#retired.length > 0) {
      for (const buffer of this.#retired) buffer.destroy();
      this.#retired.length = 0;
    }
  }

  /** GPUBuffers alive (0 after `destroy`). */
  get live(): number {
    return this.#destroyed ? 0 : 1 + this.#retired.length;
  }

  destroy(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    this.#buffer.destroy();
    for (const buffer of this.#retired) buffer.destroy();
    this.#retired.length = 0;
  }
}
