/**
 * The host memory of a tensor (internal): plain JavaScript memory, or pinned memory (a host-visible
 * device buffer viewed through the HostMapping capability). `uses` is the join of every fence after
 * which a queue operation that reads or writes these bytes is done; host code may change the bytes
 * only once it is reached (otherwise it writes into fresh storage: copy on write).
 */
import { ErrorCode, Fence, KeelError } from '@keel/fence';
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

/**
 * `storageBytes` zeroed bytes of host memory for `owner` (a tensor). RESOURCE_EXHAUSTED naming `what`,
 * the tensor and the size when the platform cannot allocate them (a typed array too long for the
 * engine, or out of memory), never the engine's RangeError; nothing is allocated then.
 */
export function allocateHostBytes(
  storageBytes: number,
  what: string,
  owner: { describe(): string },
): Uint8Array {
  try {
    return new Uint8Array(storageBytes);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new KeelError(
      ErrorCode.RESOURCE_EXHAUSTED,
      `${what}: ${owner.describe()}: cannot allocate ${storageBytes} bytes of host memory (${error.message})`,
      { cause: error },
    );
  }
}

/** Plain host storage of `storageBytes` zeroed bytes (see `allocateHostBytes` for the errors). */
export function plainStorage(storageBytes: number, what: string, owner: { describe(): string }): HostStorage {
  return new HostStorage(allocateHostBytes(storageBytes, what, owner));
}
