/**
 * Pooled staging buffers for `queueRead` (MAP_READ | COPY_DST). Sizes are powers of two from 256
 * bytes; a few buffers per size are kept for reuse (a readback round trip then creates nothing), larger
 * or surplus ones are destroyed when given back.
 */
import type { ErrorScopes } from './gpu-errors';
import { USAGE_COPY_DST, USAGE_MAP_READ } from './gpu-flags';
import { stagingSize } from './gpu-memory';

/** Buffers kept per size class. */
const KEEP_PER_CLASS = 4;
/** Largest size class kept for reuse (bigger staging buffers are made per read). */
const MAX_KEPT_SIZE = 64 * 1024 * 1024;

export class ReadbackPool {
  readonly #device: GPUDevice;
  readonly #scopes: ErrorScopes;

  readonly #free = new Map<number, GPUBuffer[]>();
  #created = 0;
  #reused = 0;
  /** Staging buffers made and not destroyed (free or in use by a read). */
  #live = 0;

  constructor(device: GPUDevice, scopes: ErrorScopes) {
    this.#device = device;
    this.#scopes = scopes;
  }

  /** The size class (staging buffer size) for `bytes`. */
  static sizeFor: (bytes: number) => number = stagingSize;

  /** A staging buffer of `size` bytes (a size class), unmapped. */
  acquire(size: number): GPUBuffer {
    const free = this.#free.get(size);
    const reused = free?.pop();
    if (reused !== undefined) {
      this.#reused++;
      return reused;
    }
    this.#created++;
    this.#live++;
    this.#scopes.enter();
    return this.#device.createBuffer({
      label: 'keel readback',
      size,
      usage: USAGE_MAP_READ | USAGE_COPY_DST,
    });
  }

  /** Gives a staging buffer back (unmapping it); `destroy` drops it instead of keeping it. */
  release(buffer: GPUBuffer, size: number, destroy: boolean): void {
    if (buffer.mapState !== 'unmapped') {
      try {
        buffer.unmap();
      } catch {
        // Lost devices may refuse; the buffer is destroyed below or dropped with the device.
      }
    }
    let free = this.#free.get(size);
    if (destroy || size > MAX_KEPT_SIZE || (free !== undefined && free.length >= KEEP_PER_CLASS)) {
      this.#live--;
      buffer.destroy();
      return;
    }
    if (free === undefined) {
      free = [];
      this.#free.set(size, free);
    }
    free.push(buffer);
  }

  get stats(): { created: number; reused: number } {
    return { created: this.#created, reused: this.#reused };
  }

  get live(): number {
    return this.#live;
  }

  destroy(): void {
    for (const free of this.#free.values()) {
      for (const buffer of free) buffer.destroy();
      this.#live -= free.length;
    }
    this.#free.clear();
  }
}
