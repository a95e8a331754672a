/**
 * ResidencyManager: the device copies of tensors on one device, within a byte budget (Glow's
 * DeviceManager transferToDevice / transferFromDevice / releaseDeviceTensor, done lazily).
 *
 * - `acquire(tensor, access)` makes the copy on this device up to date if the access reads it (one
 *   upload from the host, one queueCopy from another manager's copy on the same device, or a move
 *   through the host from another device) and hands out a TensorLease (buffer + wait fence); the
 *   lease's `release(after)` takes back the fence after which the caller's use is over.
 * - Budget: copies live in device memory from `queueAlloca` (or `createBuffer`, see `allocation`); when
 *   a new copy does not fit, unleased copies are evicted: stale ones first, then least recently used.
 *   An evicted copy that is the only up-to-date one is written back to the host first (queueRead), so
 *   nothing is lost; its memory is freed (queueDealloca) once every use of it is over.
 * - A tensor larger than the whole budget cannot be acquired (RESOURCE_EXHAUSTED naming the tensor):
 *   `stream()` processes it in chunks instead.
 * - Nothing blocks the calling thread: every transfer is enqueued with fences, and bookkeeping happens
 *   when an operation is issued (a copy is "up to date" once the transfer filling it is enqueued; its
 *   `ready` fence says when the bytes are there).
 * - Errors: KeelError INVALID_ARGUMENT (bad arguments, dtype/shape mismatch), FAILED_PRECONDITION
 *   (released tensor, conflicting lease, disposed manager), RESOURCE_EXHAUSTED (budget), UNAVAILABLE
 *   (device lost or destroyed), DATA_LOSS (the only up-to-date copy was on a lost device).
 *
 * This file is the public class: options, argument checks and the operations. Its concepts live in
 * their own files, over the manager's internal state (manager-core.ts): eviction.ts (budget, LRU),
 * transfers.ts (host ↔ device moves), leasing.ts (acquire / release), pinned-memory.ts, device-loss.ts
 * (loss, mirror restore, rehome), stream.ts (chunked processing), mirror-policy.ts, counters.ts.
 */
import { describeValue, ErrorCode, Fence, KeelError } from '@keel/fence';
import {
  BufferUsage,
  checkOptions,
  type Device,
  hasAllBits,
  type OptionRules,
  QueueAffinity,
} from '@keel/hal';
import { CounterSet, type ResidencyCounters } from './counters';
import { onDeviceLost, rehomeOrphans } from './device-loss';
import { type AllocationStrategy, type DeviceMemory, deviceMemory, freshSignal } from './device-memory';
import type { DType } from './dtype';
import { evictCopy, makeRoom } from './eviction';
import { commitHostWrite, freshStorage } from './host-access';
import { type HostMapping, hostMappingOf } from './host-mapping';
import { type Access, isAccess, type TensorLease, type TensorLeases } from './lease';
import { leaseAll, leaseCopy } from './leasing';
import { ManagerCore } from './manager-core';
import { type MirrorOptions, MirrorPolicy } from './mirror-policy';
import type { Shape } from './shape';
import { sameShape } from './shape';
import { type StreamCallback, type StreamHost, type StreamOptions, streamThrough } from './stream';
import { newState, stateOf, type Tensor, type TensorOptions, tensorOf } from './tensor';

/** Budget of a manager created without `budgetBytes`: 256 MiB. */
export const DEFAULT_BUDGET_BYTES = 256 * 1024 * 1024;

export interface ResidencyManagerOptions {
  /** Most bytes of device copies held at once (default DEFAULT_BUDGET_BYTES). */
  readonly budgetBytes?: number;
  /** Queues every transfer of this manager runs on (default QueueAffinity.ANY). */
  readonly affinity?: QueueAffinity;
  /** Where copies get memory: 'queue-ordered' (queueAlloca/queueDealloca, default) or 'buffers'. */
  readonly allocation?: AllocationStrategy;
  /** Usage bits of device copies (default BufferUsage.DEFAULT); must include TRANSFER. */
  readonly usage?: BufferUsage;
  /** An application-supplied HostMapping for devices that do not implement it themselves. */
  readonly hostMapping?: HostMapping;
  /** A name used in messages (default `<backend>:<device name>`). */
  readonly label?: string;
}

/** One tensor and what an operation does with it. */
export interface AcquireRequest {
  readonly tensor: Tensor;
  readonly access: Access;
}

/** The options a ResidencyManager takes (unknown keys and wrong types are INVALID_ARGUMENT). */
const OPTION_RULES: OptionRules = {
  budgetBytes: { type: 'integer', min: 1 },
  affinity: { type: 'custom', expected: 'a 32-bit integer queue mask', check: QueueAffinity.isValid },
  allocation: { type: 'string', oneOf: ['queue-ordered', 'buffers'] },
  usage: { type: 'integer', min: 0 },
  hostMapping: { type: 'object' },
  label: { type: 'string' },
};

/** The options `stream` takes (unknown keys and wrong types are INVALID_ARGUMENT). */
const STREAM_OPTION_RULES: OptionRules = {
  access: { type: 'string', oneOf: ['read', 'write', 'readwrite'] },
  chunkBytes: { type: 'integer', min: 1 },
};

function checkBudget(value: unknown): number {
  if (value === undefined) return DEFAULT_BUDGET_BYTES;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new KeelError(
      ErrorCode.INVALID_ARGUMENT,
      `residency manager: budgetBytes ${describeValue(value)} must be a positive integer`,
    );
  }
  return value;
}

function isDevice(value: unknown): value is Device {
  const d = value as Partial<Device> | null;
  return (
    typeof d === 'object' &&
    d !== null &&
    typeof d.queueWrite === 'function' &&
    typeof d.queueRead === 'function' &&
    typeof d.createSemaphore === 'function' &&
    typeof d.info === 'object'
  );
}

export class ResidencyManager implements AsyncDisposable {
  readonly device: Device;
  readonly label: string;
  readonly budgetBytes: number;
  readonly affinity: QueueAffinity;
  readonly allocation: AllocationStrategy;

  readonly #usage: BufferUsage;
  readonly #memory: DeviceMemory;
  readonly #mapping: HostMapping | undefined;
  readonly #counters: CounterSet;
  /** The internal state every concept file works on (LRU, leases, pinned storages, loss, mirror). */
  readonly #core: ManagerCore;

  constructor(device: Device, rawOptions?: ResidencyManagerOptions) {
    const options = checkOptions<ResidencyManagerOptions>('ResidencyManager', rawOptions, OPTION_RULES);
    if (!isDevice(device)) {
      throw new KeelError(ErrorCode.INVALID_ARGUMENT, 'residency manager: `device` must be a Keel Device');
    }
    this.device = device;
    this.budgetBytes = checkBudget(options.budgetBytes);
    this.affinity = options.affinity ?? QueueAffinity.ANY;
    // Every transfer runs on these queues: a mask that selects none of the device's is refused now,
    // not at the first acquire (after which a failed transfer could leave state behind).
    QueueAffinity.select(
      this.affinity,
      device.info.queueCount,
      `ResidencyManager: option 'affinity' on device '${device.info.name}'`,
    );
    this.allocation = options.allocation ?? 'queue-ordered';
    if (this.allocation !== 'queue-ordered' && this.allocation !== 'buffers') {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `residency manager: allocation ${describeValue(this.allocation)} is not 'queue-ordered' or 'buffers'`,
      );
    }
    this.#usage = options.usage ?? BufferUsage.DEFAULT;
    if (!hasAllBits(this.#usage, BufferUsage.TRANSFER)) {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        'residency manager: usage must include TRANSFER_SOURCE and TRANSFER_TARGET (copies are transferred)',
      );
    }
    this.label = options.label ?? `${device.info.backend}:${device.info.name}`;
    this.#mapping = hostMappingOf(device, options.hostMapping);
    this.#memory = deviceMemory(this.allocation, device, this.affinity, this.#usage);
    this.#counters = new CounterSet(this.budgetBytes);
    this.#core = new ManagerCore(this, this.#usage, this.#mapping, this.#memory, this.#counters);
    device.lost.then(
      (reason) => onDeviceLost(this.#core, reason),
      () => {},
    );
  }

  /** A snapshot of the counters. */
  get counters(): ResidencyCounters {
    this.#core.checkDevice();
    return this.#counters.snapshot();
  }

  /** True when the device (or `options.hostMapping`) provides HostMapping: `createPinned` pins. */
  get supportsPinned(): boolean {
    return this.#mapping !== undefined;
  }

  /**
   * The reason once the device was lost or destroyed (every later call is UNAVAILABLE): known from the
   * moment the device is (`device.lostReason`), not only once `device.lost` resolves.
   */
  get lostReason(): KeelError | undefined {
    return this.#core.checkDevice();
  }

  /**
   * Starts mirroring dirty device copies of this manager to host memory (see MirrorPolicy): every
   * `everyUses` released write leases of a tensor and/or every `everyMs` milliseconds. Returns the
   * policy; `policy[Symbol.dispose]()` stops it. INVALID_ARGUMENT for bad options (checkOptions),
   * FAILED_PRECONDITION while another policy of this manager is active.
   */
  mirror(options: MirrorOptions): MirrorPolicy {
    const what = 'ResidencyManager.mirror';
    this.#core.checkUsable(what);
    if (this.#core.mirror !== undefined && !this.#core.mirror.stopped) {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `${what}: residency manager '${this.label}' already has an active mirror policy; dispose it first`,
      );
    }
    this.#core.mirror = new MirrorPolicy(
      { device: this.device, owner: this.#core.owner, label: this.label, affinity: this.affinity },
      options,
    );
    return this.#core.mirror;
  }

  /** The mirror policy of this manager (active or stopped), if `mirror()` was called. */
  get mirrorPolicy(): MirrorPolicy | undefined {
    this.#core.checkDevice();
    return this.#core.mirror;
  }

  /** The version of `tensor` its last completed mirror on this manager holds, or undefined. */
  mirroredVersion(tensor: Tensor): number | undefined {
    const state = stateOf(tensor, 'ResidencyManager.mirroredVersion');
    this.#core.checkDevice();
    return this.#core.mirror?.mirroredVersionOf(state);
  }

  /**
   * After this manager's device was lost: a new manager on `device` (same budget, affinity, allocation,
   * usage and label unless `options` say otherwise; the same mirror policy if one was active) onto which
   * every tensor that had a copy here is uploaded again from its host copy — restored from its mirror,
   * or clean on the host anyway. Tensors that lost their data (no mirror) are left alone and read
   * DATA_LOSS; tensors still leased are uploaded by their next acquire. FAILED_PRECONDITION unless the
   * device was lost; INVALID_ARGUMENT for the lost device itself. Called once (the tensors move).
   */
  rehome(device: Device, options: ResidencyManagerOptions = {}): ResidencyManager {
    const what = 'ResidencyManager.rehome';
    if (this.#core.checkDevice() === undefined || this.#core.disposed) {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `${what}: residency manager '${this.label}' ${this.#core.disposed ? 'was disposed' : 'still has its device'}; rehome moves tensors off a lost device`,
      );
    }
    if (device === this.device) {
      throw new KeelError(ErrorCode.INVALID_ARGUMENT, `${what}: the new device is the lost device`);
    }
    const next = new ResidencyManager(device, {
      budgetBytes: this.budgetBytes,
      affinity: this.affinity,
      allocation: this.allocation,
      usage: this.#usage,
      label: this.label,
      ...options,
    });
    if (this.#core.mirrorAtLoss !== undefined) next.mirror(this.#core.mirrorAtLoss);
    rehomeOrphans(this.#core, next.#core, what);
    return next;
  }

  /** Tensors with a copy (up to date or stale) on this device. */
  get residentCount(): number {
    this.#core.checkDevice();
    return this.#core.lru.size;
  }

  /**
   * A tensor of zeros whose host storage is pinned memory of this device (a HOST_VISIBLE, MAPPING
   * buffer viewed through HostMapping): uploads to and readbacks from this device are one queueCopy,
   * with no host copy (`hostCopyBytes` unchanged). Fill it in place with `writeWith`. Without the
   * capability the tensor gets ordinary host memory (`isPinned` false) and transfers copy as usual.
   */
  createPinned<D extends DType>(dtype: D, shape: Shape, options?: TensorOptions): Tensor<D> {
    const what = 'ResidencyManager.createPinned';
    this.#core.checkUsable(what);
    const state = newState(dtype, shape, options, what);
    if (this.#mapping !== undefined) state.pinnedBy = this.#core.owner;
    state.host.storage = freshStorage(state, what);
    commitHostWrite(state);
    return tensorOf<D>(state);
  }

  /**
   * Leases the copy of `tensor` on this device for one operation (see TensorLease for the protocol).
   * 'read' and 'readwrite' make the copy up to date first (at most one transfer; none if it is);
   * 'write' skips that (every byte will be overwritten) and, on release, makes every other copy stale.
   * A write lease needs exclusive access (FAILED_PRECONDITION while any other lease of the tensor is
   * open); read leases share (FAILED_PRECONDITION while a write lease is open).
   */
  acquire<D extends DType>(tensor: Tensor<D>, access: Access): TensorLease<D> {
    const what = 'ResidencyManager.acquire';
    this.#core.checkUsable(what);
    const state = stateOf(tensor, what);
    if (!isAccess(access)) {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `${what}: access ${JSON.stringify(access)} is not 'read', 'write' or 'readwrite'`,
      );
    }
    return leaseCopy(this.#core, tensor, state, access, what, undefined);
  }

  /**
   * Leases several tensors for one operation: no copy of the batch is evicted to make room for another
   * of the batch. The same tensor may appear once. RESOURCE_EXHAUSTED when the batch exceeds the budget.
   * On error no lease stays open (transfers already enqueued stay valid).
   */
  acquireAll(requests: readonly AcquireRequest[]): TensorLeases {
    const what = 'ResidencyManager.acquireAll';
    this.#core.checkUsable(what);
    return leaseAll(this.#core, requests, what);
  }

  /**
   * Copies `source` into `target` on this device (one queueCopy between their copies here, after
   * making the source's copy up to date); `target` gets new contents, every other copy of it becomes
   * stale. Returns the fence after which the copy is done. INVALID_ARGUMENT for a dtype or shape
   * mismatch or when both are the same tensor.
   */
  copy(source: Tensor, target: Tensor): Fence {
    const what = 'ResidencyManager.copy';
    this.#core.checkUsable(what);
    const from = stateOf(source, `${what}: source`);
    const to = stateOf(target, `${what}: target`);
    if (from === to) {
      throw new KeelError(ErrorCode.INVALID_ARGUMENT, `${what}: source and target are the same tensor`);
    }
    if (from.dtype !== to.dtype) {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `${what}: dtype mismatch: ${from.describe()} cannot be copied into ${to.describe()}`,
      );
    }
    if (!sameShape(from.shape, to.shape)) {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `${what}: shape mismatch: ${from.describe()} cannot be copied into ${to.describe()}`,
      );
    }
    const leases = leaseAll(
      this.#core,
      [
        { tensor: source, access: 'read' },
        { tensor: target, access: 'write' },
      ],
      what,
    );
    const signal = freshSignal(this.device);
    try {
      this.device.queueCopy(
        this.affinity,
        leases.wait,
        signal,
        { buffer: leases.buffer(0), offset: 0, length: from.storageBytes },
        { buffer: leases.buffer(1), offset: 0, length: to.storageBytes },
      );
    } catch (error) {
      leases.cancel();
      throw error;
    }
    leases.release(signal);
    return signal;
  }

  /**
   * Processes `tensor` in chunks of at most `chunkBytes` through this device (see StreamChunk): for
   * tensors larger than the budget, or to bound device memory. The bytes come from the tensor's host
   * copy (read back first if stale); with 'write'/'readwrite' access each chunk is read back into the
   * host storage after the callback's fence, the host copy becomes the only up-to-date one and its
   * `ready` fence is the returned one. Returns at once with the fence after which every chunk is done.
   * If the callback throws, chunks already issued complete, the stream stops and the error is rethrown;
   * a partly rewritten tensor then reads as DATA_LOSS until it is written again. Options are checked
   * with `checkOptions` (INVALID_ARGUMENT for unknown keys and wrong types). A host write during a read
   * stream goes to fresh memory: every chunk sees the version the stream started with.
   */
  stream(tensor: Tensor, options: StreamOptions, callback: StreamCallback): Fence {
    const what = 'ResidencyManager.stream';
    this.#core.checkUsable(what);
    const state = stateOf(tensor, what);
    const checked = checkOptions<StreamOptions>(what, options, STREAM_OPTION_RULES);
    if (typeof callback !== 'function') {
      throw new KeelError(ErrorCode.INVALID_ARGUMENT, `${what}: callback must be a function`);
    }
    const host: StreamHost = {
      label: this.label,
      device: this.device,
      affinity: this.affinity,
      budgetBytes: this.budgetBytes,
      counters: this.#counters,
      memory: this.#memory,
      makeRoom: (bytes, w) => makeRoom(this.#core, bytes, w),
    };
    return streamThrough(host, state, checked, callback, what);
  }

  /**
   * Drops this device's copy of `tensor` (writing it back to the host first when it is the only
   * up-to-date copy). Returns false when there was none. FAILED_PRECONDITION while it is leased.
   */
  evict(tensor: Tensor): boolean {
    const what = 'ResidencyManager.evict';
    this.#core.checkUsable(what);
    const state = stateOf(tensor, what);
    state.checkLive(what);
    const copy = state.copies.get(this.#core.owner);
    if (copy === undefined) return false;
    if (copy.leases > 0) {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `${what}: the copy of ${state.describe()} on '${this.label}' has ${copy.leases} open lease(s)`,
      );
    }
    evictCopy(this.#core, copy);
    return true;
  }

  /** Evicts every unleased copy (see `evict`); returns how many. */
  evictAll(): number {
    this.#core.checkUsable('ResidencyManager.evictAll');
    let evicted = 0;
    for (const copy of [...this.#core.lru]) {
      if (copy.leases > 0) continue;
      evictCopy(this.#core, copy);
      evicted++;
    }
    return evicted;
  }

  /**
   * Evicts every copy (writing back the ones that are the only up-to-date copy), waits for the
   * write-backs, and makes the manager unusable (FAILED_PRECONDITION). Pinned tensors keep their
   * storage until released. Rejects FAILED_PRECONDITION while a lease is open. Idempotent.
   */
  async dispose(): Promise<void> {
    if (this.#core.disposed) return;
    // A device lost in this turn: its copies are gone (and their leases with them), nothing to evict.
    const lost = this.#core.checkDevice();
    const open = [...this.#core.lru].filter((copy) => copy.leases > 0).length;
    if (open > 0) {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `ResidencyManager.dispose: residency manager '${this.label}' has ${open} leased copies; release the leases first`,
      );
    }
    this.#core.mirror?.[Symbol.dispose]();
    const written: Fence[] = [];
    if (lost === undefined) {
      for (const copy of [...this.#core.lru]) {
        const writeBack = copy.state.isOnlyValid(copy);
        evictCopy(this.#core, copy);
        if (writeBack) written.push(copy.state.host.ready);
      }
    }
    this.#core.disposed = true;
    await Fence.join(...written).wait();
    this.#core.readbacks.clear();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }

  toString(): string {
    return `ResidencyManager('${this.label}')`;
  }
}
