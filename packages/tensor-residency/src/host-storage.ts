/**
 * The host memory of a tensor (internal): plain JavaScript memory, or pinned memory (a host-visible
 * device buffer viewed through the HostMapping capability). `uses` is the join of every fence after
 * which a queue operation that reads or writes these bytes is done; host code may change the bytes
 * only once it is reached (otherwise it writes into fresh storage: copy on write).
 */
import { Fence } from '@keel/fence';
import type { Buffer, Device } from '@keel/hal';
import type { CopyOwner } from './tensor-state';

/** The device buffer behind pinned storage and the manager that made it. */
export interface PinnedMemory {
  readonly buffer: Buffer;
  /** The manager whose device owns `buffer`. */
  readonly owner: CopyOwner;
}

export class HostStorage {
  /** Readers and writers of these bytes in flight (queue operations). */
  uses: Fence = Fence.empty;

  /**
   * @param bytes the storage, `storageBytes` long (the tensor's byte length rounded up to 4), at an
   *   offset aligned to 8 so that every dtype view fits
   * @param pinned set for pinned storage: `bytes` aliases `pinned.buffer`
   */
  constructor(
    readonly bytes: Uint8Array,
    readonly pinned?: PinnedMemory,
  ) {}

  /** True when `bytes` aliases a buffer of `device` (a transfer to or from it can be a queueCopy). */
  isPinnedTo(device: Device): boolean {
    return (
      this.pinned !== undefined && this.pinned.owner.device === device && this.pinned.buffer.state === 'live'
    );
  }
}

/** Plain host storage of `storageBytes` zeroed bytes. */
export function plainStorage(storageBytes: number): HostStorage {
  return new HostStorage(new Uint8Array(storageBytes));
}
