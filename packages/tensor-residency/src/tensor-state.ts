/**
 * The residency state of a tensor (internal): which locations hold which version of its bytes, and
 * the fences that make each ready and that end each one's uses.
 *
 * Versions: a tensor's contents have a version, bumped by every write (host or device). A location is
 * up to date when it holds the current version. Version 0 means "no contents yet" (`Tensor.empty`).
 *
 * Every piece of bookkeeping happens synchronously when an operation is issued; completion is carried
 * by fences. So a location is "up to date" as soon as the transfer that fills it is issued, and readers
 * wait on its `ready` fence.
 */
import { ErrorCode, Fence, KeelError } from '@keel/fence';
import type { Buffer, Device } from '@keel/hal';
import type { DType } from './dtype';
import type { HostStorage } from './host-storage';
import type { RecoveryRecord } from './mirror-policy';
import type { ResidencyManager } from './residency-manager';
import type { Shape } from './shape';
import { describeShape } from './shape';

/** What a tensor asks of the manager that holds one of its device copies (ResidencyManager). */
export interface CopyOwner {
  /** The public manager object (what `Tensor.locations` reports). */
  readonly manager: ResidencyManager;
  readonly label: string;
  readonly device: Device;
  /** Throws UNAVAILABLE (device lost) or FAILED_PRECONDITION (manager disposed). */
  checkUsable(what: string): void;
  /**
   * The loss reason once the device was lost or destroyed, else undefined; a loss not handled yet
   * (the same turn as it) is handled first, so the tensor's state is the state after it.
   */
  checkDevice(): KeelError | undefined;
  /** Issues the readback of `copy` (up to date) into its tensor's host storage (see ResidencyManager). */
  readBack(copy: DeviceCopy): void;
  /** Frees `copy` once its uses are over and forgets it (Tensor.release). */
  dropCopy(copy: DeviceCopy): void;
  /** Fresh pinned storage for `state` on this device, or undefined when it cannot make one. */
  pinnedStorage(state: TensorState): HostStorage | undefined;
  /** Destroys pinned storage once its uses are over. */
  freePinned(storage: HostStorage): void;
}

/** The host location of a tensor. */
export class HostLocation {
  storage: HostStorage | undefined = undefined;
  /** The version `storage` holds (or will hold once `ready` is reached). */
  version = 0;
  /** Reached once the bytes of `version` are in `storage` (a pending or finished readback). */
  ready: Fence = Fence.empty;
}

/** A copy of a tensor in a device buffer held by one manager. */
export class DeviceCopy {
  /** The version `buffer` holds (or will hold once `ready` is reached). */
  version = 0;
  /** Reached once the bytes of `version` are in `buffer`; fails if the operation producing them failed. */
  ready: Fence;
  /** Reached once every operation that read or wrote `buffer` is done. */
  uses: Fence = Fence.empty;
  /** Open leases on this copy. A leased copy is never evicted. */
  leases = 0;

  constructor(
    readonly owner: CopyOwner,
    readonly state: TensorState,
    readonly buffer: Buffer,
    allocated: Fence,
  ) {
    this.ready = allocated;
  }

  /** Bytes this copy occupies in its manager's budget. */
  get bytes(): number {
    return this.state.storageBytes;
  }
}

/** The residency state behind a Tensor. */
export class TensorState {
  /** Current version of the contents; 0 = never written. */
  version = 0;
  readonly host = new HostLocation();
  readonly copies = new Map<CopyOwner, DeviceCopy>();
  released = false;
  /** Open leases (read or write) on any copy; `writeLeases` of them write. */
  openLeases = 0;
  writeLeases = 0;
  /** Set when the only up-to-date copy was lost (device lost, failed in-place host write, ...). */
  dataLoss: KeelError | undefined = undefined;
  /** Set when the contents were restored from a mirror after a device loss; cleared by the next write. */
  recovery: RecoveryRecord | undefined = undefined;
  /** The manager whose pinned memory this tensor's host storage prefers (Tensor created pinned). */
  pinnedBy: CopyOwner | undefined = undefined;

  constructor(
    readonly dtype: DType,
    readonly shape: Shape,
    readonly elements: number,
    readonly byteLength: number,
    readonly storageBytes: number,
    readonly label: string | undefined,
  ) {}

  /** "tensor 'w' (f32 [2, 3])": how messages name the tensor. */
  describe(): string {
    const name = this.label === undefined ? 'tensor' : `tensor '${this.label}'`;
    return `${name} (${this.dtype} ${describeShape(this.shape)})`;
  }

  isHostValid(): boolean {
    return this.version > 0 && this.host.version === this.version;
  }

  isValid(copy: DeviceCopy): boolean {
    return this.version > 0 && copy.version === this.version;
  }

  /** True when `copy` is up to date and no other location is (evicting it needs a write-back). */
  isOnlyValid(copy: DeviceCopy): boolean {
    if (!this.isValid(copy) || this.isHostValid()) return false;
    for (const other of this.copies.values()) if (other !== copy && this.isValid(other)) return false;
    return true;
  }

  /** True when some location (host or device) holds the current version. */
  hasValidLocation(): boolean {
    if (this.isHostValid()) return true;
    for (const copy of this.copies.values()) if (this.isValid(copy)) return true;
    return false;
  }

  /** FAILED_PRECONDITION once released. */
  checkLive(what: string): void {
    if (this.released) {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `${what}: ${this.describe()} was released and cannot be used`,
      );
    }
  }

  /** FAILED_PRECONDITION while a write lease is open (its writer may be changing the bytes). */
  checkNoWriter(what: string): void {
    if (this.writeLeases > 0) {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `${what}: ${this.describe()} has an open write lease; release it before using the tensor elsewhere`,
      );
    }
  }

  /** Everything a read needs: live, no open writer, contents present and not lost. */
  checkReadable(what: string): void {
    this.checkLive(what);
    this.checkNoWriter(what);
    if (this.dataLoss !== undefined) throw this.dataLoss;
    if (this.version === 0) {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `${what}: ${this.describe()} has no contents yet; write it (on the host or a device) before reading it`,
      );
    }
  }

  /** Marks the host storage as no longer holding any version; data loss if nothing else is valid. */
  invalidateHost(reason: KeelError): void {
    this.host.version = -1;
    if (this.version > 0 && !this.hasValidLocation()) this.dataLoss = reason;
  }
}
