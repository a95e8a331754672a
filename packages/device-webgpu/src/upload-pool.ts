/**
 * Pooled staging buffers for `queueWrite` (MAP_WRITE | COPY_SRC), handed out already mapped so a write
 * never waits: the bytes go into the mapped range, the buffer is unmapped and copied from in command
 * order, and once the GPU finished that submission the buffer is re-mapped (`mapAsync(WRITE)`, nothing
 * blocks on it) and becomes free again when the map resolves. When no mapped buffer of the size class
 * is free, a new one is made with `mappedAtCreation: true`.
 *
 * Size classes are powers of two from 256 bytes up to UPLOAD_CHUNK (4 MiB); larger writes are split
 * into chunks of at most UPLOAD_CHUNK bytes by the device. Per class, `keepFor(size)` buffers are kept
 * (1 MiB worth, between 4 and 32 buffers: bursts of small writes issued back to back each need their
 * own buffer), and at most MAX_KEPT_BYTES in all (free or re-mapping); surplus buffers are destroyed
 * when given back.
 *
 * Teardown never destroys a buffer whose `mapAsync` is pending (Dawn crashes or hangs when such a
 * buffer and its device are destroyed and collected): `destroy` drops the free buffers at once and
 * each re-mapping buffer when its map settles; `settled()` resolves once none is left. Each buffer's
 * map callbacks are bound once, when it is created, so a write allocates no closure.
 */
import { MAP_WRITE, USAGE_COPY_SRC, USAGE_MAP_WRITE } from './gpu-flags';
import { stagingSize } from './gpu-memory';

/** Largest staging buffer (and size class): writes are split into chunks of at most this many bytes. */
export const UPLOAD_CHUNK = 4 * 1024 * 1024;
/** Bytes worth of buffers kept per size class, and the bounds on their number. */
const KEEP_BYTES_PER_CLASS = 1024 * 1024;
const MIN_KEEP_PER_CLASS = 4;
const MAX_KEEP_PER_CLASS = 32;
/** Bytes kept over all classes (free or being re-mapped). */
const MAX_KEPT_BYTES = 16 * 1024 * 1024;

/** Buffers kept (free or being re-mapped) of size class `size`. */
export function keepFor(size: number): number {
  return Math.min(MAX_KEEP_PER_CLASS, Math.max(MIN_KEEP_PER_CLASS, Math.floor(KEEP_BYTES_PER_CLASS / size)));
}

/** A staging buffer's map callbacks (bound once). */
interface Staging {
  readonly onMapped: () => void;
  readonly onMapFailed: () => void;
}

interface SizeClass {
  /** Buffers kept of this class (keepFor). */
  readonly keep: number;
  /** Mapped buffers ready to be written. */
  readonly free: GPUBuffer[];
  /** Buffers of this class being re-mapped (they join `free` when the map resolves). */
  remapping: number;
}

/** Counters of the upload pool (WebGpuDeviceStats.upload). */
export interface UploadPoolStats {
  /** Staging buffers created (mapped at creation). */
  readonly created: number;
  /** Acquisitions served by a pooled, re-mapped buffer. */
  readonly reused: number;
  /** Staging buffers destroyed (surplus, failed maps, teardown). */
  readonly destroyed: number;
  /** Mapped buffers free now. */
  readonly free: number;
  /** Buffers being re-mapped now. */
  readonly remapping: number;
  /** Bytes held by free and re-mapping buffers. */
  readonly keptBytes: number;
}

export class UploadPool {
  readonly #device: GPUDevice;

  readonly #classes = new Map<number, SizeClass>();
  /** Every buffer the pool made and has not destroyed. */
  readonly #staging = new Map<GPUBuffer, Staging>();
  /** Every buffer being re-mapped (destroyed when its map settles once the pool is destroyed). */
  readonly #remapping = new Set<GPUBuffer>();
  #onSettled: (() => void) | undefined;
  #keptBytes = 0;
  #created = 0;
  #reused = 0;
  #destroyedCount = 0;
  #destroyed = false;

  constructor(device: GPUDevice) {
    this.#device = device;
  }

  #class(size: number): SizeClass {
    let c = this.#classes.get(size);
    if (c === undefined) {
      c = { keep: keepFor(size), free: [], remapping: 0 };
      this.#classes.set(size, c);
    }
    return c;
  }

  /** A mapped staging buffer of at least `bytes` bytes (its size is a size class). */
  acquire(bytes: number): GPUBuffer {
    const size = stagingSize(bytes);
    const reused = this.#classes.get(size)?.free.pop();
    if (reused !== undefined) {
      this.#keptBytes -= size;
      this.#reused++;
      return reused;
    }
    this.#created++;
    const buffer = this.#device.createBuffer({
      label: 'keel upload',
      size,
      usage: USAGE_MAP_WRITE | USAGE_COPY_SRC,
      mappedAtCreation: true,
    });
    const c = this.#class(size);
    this.#staging.set(buffer, {
      onMapped: () => this.#remapped(buffer, c, true),
      onMapFailed: () => this.#remapped(buffer, c, false),
    });
    return buffer;
  }

  /**
   * Gives a staging buffer back once the GPU work that copied from it completed (or when it was never
   * submitted): re-maps it for the next use, or destroys it (`destroy`, teardown, class or byte limit).
   */
  release(buffer: GPUBuffer, destroy: boolean): void {
    const size = buffer.size;
    const c = this.#class(size);
    if (
      destroy ||
      this.#destroyed ||
      c.free.length + c.remapping >= c.keep ||
      this.#keptBytes + size > MAX_KEPT_BYTES
    ) {
      this.#drop(buffer);
      return;
    }
    this.#keptBytes += size;
    if (buffer.mapState === 'mapped') {
      // Acquired but never unmapped (the operation failed while encoding): still writable.
      c.free.push(buffer);
      return;
    }
    const staging = this.#staging.get(buffer) as Staging;
    c.remapping++;
    this.#remapping.add(buffer);
    buffer.mapAsync(MAP_WRITE, 0, size).then(staging.onMapped, staging.onMapFailed);
  }

  #remapped(buffer: GPUBuffer, c: SizeClass, ok: boolean): void {
    if (!this.#remapping.delete(buffer)) return;
    c.remapping--;
    if (ok && !this.#destroyed) {
      c.free.push(buffer);
      return;
    }
    this.#keptBytes -= buffer.size;
    this.#drop(buffer);
    if (this.#remapping.size === 0 && this.#onSettled !== undefined) {
      const resolve = this.#onSettled;
      this.#onSettled = undefined;
      resolve();
    }
  }

  #drop(buffer: GPUBuffer): void {
    this.#destroyedCount++;
    this.#staging.delete(buffer);
    buffer.destroy();
  }

  /** Staging buffers alive (made and not destroyed: free, re-mapping or in use by a write). */
  get live(): number {
    return this.#staging.size;
  }

  /** Resolves once no buffer is being re-mapped (after `destroy`, once every one is destroyed). */
  settled(): Promise<void> {
    if (this.#remapping.size === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const previous = this.#onSettled;
      this.#onSettled = () => {
        previous?.();
        resolve();
      };
    });
  }

  get stats(): UploadPoolStats {
    let free = 0;
    for (const c of this.#classes.values()) free += c.free.length;
    return {
      created: this.#created,
      reused: this.#reused,
      destroyed: this.#destroyedCount,
      free,
      remapping: this.#remapping.size,
      keptBytes: this.#keptBytes,
    };
  }

  /**
   * Destroys every free buffer now and every re-mapping one when its map settles (`settled()`); buffers
   * given back later are destroyed. Idempotent.
   */
  destroy(): void {
    this.#destroyed = true;
    for (const c of this.#classes.values()) {
      for (const buffer of c.free) {
        this.#keptBytes -= buffer.size;
        this.#drop(buffer);
      }
      c.free.length = 0;
    }
  }
}
