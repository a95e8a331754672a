/**
 * ManagerCore: the internal state of one ResidencyManager (internal), shared by the files that
 * implement its concepts — eviction.ts (budget, LRU), transfers.ts (host ↔ device moves), leasing.ts
 * (acquire / release), pinned-memory.ts (pinned host storage), device-loss.ts (loss and rehome).
 *
 * Promises:
 * - One core per manager, made by its constructor; never handed out of the package.
 * - `owner` is the CopyOwner under which this manager's copies are keyed in every TensorState; its
 *   methods are what tensors (Tensor.release, reads from the host, pinned tensors) call on the manager.
 * - `readbacks` lists the host copies still arriving from this device (device-loss.ts needs them: a
 *   host copy whose readback never lands is not a copy).
 * - `checkUsable` is the one gate of every public operation: FAILED_PRECONDITION once disposed,
 *   UNAVAILABLE once the device was lost or destroyed (the loss reason as `cause`).
 * - `checkDevice` notices a loss synchronously (`device.lostReason`), not only when `device.lost`
 *   resolves (a microtask later at the earliest): the first check that sees it runs the loss handling
 *   (device-loss.ts `onDeviceLost`, the same as `lost` would), so an operation in the same turn as the
 *   loss finds the state it would find after it. Every entry point (the manager's, its leases', and
 *   what tensors ask of `owner`) checks before it uses the device.
 */
import { ErrorCode, type Fence, KeelError } from '@keel/fence';
import type { BufferUsage, Device, QueueAffinity } from '@keel/hal';
import type { CounterSet } from './counters';
import { onDeviceLost } from './device-loss';
import type { DeviceMemory } from './device-memory';
import { forgetCopy } from './eviction';
import type { HostMapping } from './host-mapping';
import type { HostStorage } from './host-storage';
import type { MirrorOptions, MirrorPolicy } from './mirror-policy';
import { freePinned, pinnedStorage } from './pinned-memory';
import type { ResidencyManager } from './residency-manager';
import type { CopyOwner, DeviceCopy, TensorState } from './tensor-state';
import { readBack } from './transfers';

export class ManagerCore {
  readonly device: Device;
  readonly label: string;
  readonly budgetBytes: number;
  readonly affinity: QueueAffinity;
  readonly usage: BufferUsage;
  readonly memory: DeviceMemory;
  readonly mapping: HostMapping | undefined;
  readonly counters: CounterSet;
  readonly owner: CopyOwner;
  /** Every copy this manager holds, least recently used first. */
  readonly lru = new Set<DeviceCopy>();
  /** Copies an `acquireAll` in progress must not evict. */
  readonly protected = new Set<DeviceCopy>();
  /** Live pinned storages of this device and the tensors they belong to. */
  readonly pinned = new Map<HostStorage, TensorState>();
  lost: KeelError | undefined = undefined;
  disposed = false;
  mirror: MirrorPolicy | undefined = undefined;
  /** The mirror options in force when the device was lost (`rehome` carries them over). */
  mirrorAtLoss: MirrorOptions | undefined = undefined;
  /** Tensors that had a copy here when the device was lost (`rehome` uploads them). */
  readonly orphans = new Set<TensorState>();
  /**
   * Readbacks from this device into host storage that have not landed (the tensor and the readback's
   * signal): if the device is lost first, the host copy they were to fill holds nothing. An entry goes
   * when its readback lands, or is superseded, or at the loss; a failed one stays until the loss (or
   * `dispose`), since the failure may be the loss's.
   */
  readonly readbacks = new Map<TensorState, Fence>();

  constructor(
    manager: ResidencyManager,
    usage: BufferUsage,
    mapping: HostMapping | undefined,
    memory: DeviceMemory,
    counters: CounterSet,
  ) {
    this.device = manager.device;
    this.label = manager.label;
    this.budgetBytes = manager.budgetBytes;
    this.affinity = manager.affinity;
    this.usage = usage;
    this.mapping = mapping;
    this.memory = memory;
    this.counters = counters;
    this.owner = {
      manager,
      label: this.label,
      device: this.device,
      checkUsable: (what) => this.checkUsable(what),
      checkDevice: () => this.checkDevice(),
      readBack: (copy) => readBack(this, copy),
      dropCopy: (copy) => {
        this.checkDevice(); // a copy of a device lost just now is gone with it: nothing to free
        forgetCopy(this, copy);
      },
      pinnedStorage: (state) => pinnedStorage(this, state),
      freePinned: (storage) => freePinned(this, storage),
    };
  }

  /**
   * The loss reason once the device was lost or destroyed, else undefined. Reads `device.lostReason`
   * while no loss was handled yet, and handles one it finds (`onDeviceLost`, idempotent: `device.lost`
   * resolving later changes nothing). Allocation-free.
   */
  checkDevice(): KeelError | undefined {
    if (this.lost === undefined) {
      const reason = this.device.lostReason;
      if (reason !== undefined) onDeviceLost(this, reason);
    }
    return this.lost;
  }

  /** Throws FAILED_PRECONDITION once disposed, UNAVAILABLE once the device was lost (`checkDevice`). */
  checkUsable(what: string): void {
    if (this.disposed) {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `${what}: residency manager '${this.label}' was disposed`,
      );
    }
    const lost = this.checkDevice();
    if (lost !== undefined) {
      throw new KeelError(
        ErrorCode.UNAVAILABLE,
        `${what}: the device of residency manager '${this.label}' was lost or destroyed (${lost.message})`,
        { cause: lost },
      );
    }
  }
}
