/**
 * Uniform detours: how a dispatch binds a uniform (`var<uniform>` in group 0) whose bytes share a
 * GPUBuffer with a writable storage binding of the same dispatch. WebGPU forbids one GPUBuffer in
 * both usages within one dispatch, and pooled buffers share slabs (a choice Keel makes, not the
 * caller), so such a bind group binds a **detour region** of a Keel-owned buffer instead, and every
 * encode of a dispatch with it first copies the uniform's bytes there (`copyBufferToBuffer`, in
 * command order, right before the dispatch's compute pass): it sees every earlier command of its
 * submission and batch, as the direct binding would.
 *
 * - Regions are per binding index (binding i of any dispatch uses region i), so the uniform bindings
 *   of one dispatch never share a region, and dispatches sharing a region are ordered by WebGPU (each
 *   copy runs after the dispatches encoded before it). A region's buffer (UNIFORM | COPY_DST, never
 *   bound as storage) is made on first use, at a power of two of at least 256 bytes; one too small is
 *   replaced by a larger one and kept (bind groups made before may still bind it) until the device is
 *   destroyed: at most about twice the largest uniform binding per index.
 * - The copies of a bind group are recorded with it when it is created (once: bind groups are cached
 *   by the bindings' memory ranges), so a warm submission allocates and creates nothing; a replay plan
 *   looks them up once per binding set per submission.
 * - A region buffer is created inside error scopes of its own; one whose creation failed (out of
 *   memory) carries the failure once they come back: the batch that used it meanwhile fails (its own
 *   scopes catch the invalid buffer), and the next submission whose cached bind groups use it drops
 *   them and binds anew, over a new region.
 */
import type { KeelError } from '@keel/fence';
import { fromGpuError, inOwnScopes } from './gpu-errors';
import { USAGE_COPY_DST, USAGE_UNIFORM } from './gpu-flags';
import { createGpuMemory, type GpuMemory, stagingSize } from './gpu-memory';
import type { TrackWork } from './pending-work';

/** The copies a detoured bind group needs before each dispatch that binds it. */
export interface UniformCopies {
  readonly sources: readonly GPUBuffer[];
  readonly sourceOffsets: readonly number[];
  readonly targets: readonly GpuMemory[];
  readonly sizes: readonly number[];
}

export class UniformDetours {
  readonly #device: GPUDevice;
  /** Region i (binding index i); offset 0 of its buffer. */
  readonly #regions: (GpuMemory | undefined)[] = [];
  /** Outgrown or failed regions, kept for the bind groups that bind them. */
  readonly #kept: GpuMemory[] = [];
  readonly #copies = new WeakMap<GPUBindGroup, UniformCopies>();
  /** Counts a region's creation scopes as pending GPU work (set by the device; teardown waits). */
  track: TrackWork | undefined;

  constructor(device: GPUDevice) {
    this.#device = device;
  }

  /** The region of binding index `binding`, at least `size` bytes (made or replaced as needed). */
  region(binding: number, size: number): GpuMemory {
    const current = this.#regions[binding];
    if (current !== undefined && current.size >= size && current.failure === undefined) return current;
    if (current !== undefined) this.#kept.push(current);
    const bytes = Math.max(stagingSize(size), current === undefined ? 0 : current.size);
    const device = this.#device;
    const [memory, errors] = inOwnScopes(
      device,
      () => createGpuMemory(device, bytes, 'keel uniform detour', USAGE_UNIFORM | USAGE_COPY_DST),
      this.track,
    );
    errors.then((error) => {
      if (error !== undefined)
        memory.failure = fromGpuError(error, `keel uniform detour: a buffer of ${bytes} bytes`);
    });
    this.#regions[binding] = memory;
    return memory;
  }

  /** Records the copies `group` needs before each dispatch. */
  register(group: GPUBindGroup, copies: UniformCopies): void {
    this.#copies.set(group, copies);
  }

  /** The copies `group` needs, or undefined for a bind group without detours. */
  of(group: GPUBindGroup): UniformCopies | undefined {
    return this.#copies.get(group);
  }

  /** GPUBuffers alive (0 after `destroy`). */
  get live(): number {
    let n = this.#kept.length;
    for (const region of this.#regions) if (region !== undefined) n++;
    return n;
  }

  destroy(): void {
    for (const region of this.#regions) region?.buffer.destroy();
    for (const region of this.#kept) region.buffer.destroy();
    this.#regions.length = 0;
    this.#kept.length = 0;
  }
}

/** The failure of a region `copies` writes into (its creation failed), or undefined. */
export function detourFailure(copies: UniformCopies): KeelError | undefined {
  for (const target of copies.targets) if (target.failure !== undefined) return target.failure;
  return undefined;
}

/** Encodes `copies` (outside any compute pass: `encoder` is the command encoder itself). */
export function encodeDetours(encoder: GPUCommandEncoder, copies: UniformCopies): void {
  const n = copies.sizes.length;
  for (let i = 0; i < n; i++) {
    encoder.copyBufferToBuffer(
      copies.sources[i] as GPUBuffer,
      copies.sourceOffsets[i] as number,
      (copies.targets[i] as GpuMemory).buffer,
      0,
      copies.sizes[i] as number,
    );
  }
}
