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
 */
import { describeValue, ErrorCode, Fence, KeelError } from '@keel/fence';
import {
  type Buffer,
  BufferUsage,
  checkOptions,
  type Device,
  hasAllBits,
  MemoryType,
  type OptionRules,
  QueueAffinity,
} from '@keel/hal';
import { CounterSet, type ResidencyCounters } from './counters';
import {
  type AllocationStrategy,
  type DeviceMemory,
  destroyWhenOver,
  deviceMemory,
  freshSignal,
} from './device-memory';
import type { DType } from './dtype';
import { addUse, compactUses } from './fences';
import { commitHostWrite, ensureStorage, freshStorage } from './host-access';
import { checkMappedView, type HostMapping, hostMappingOf } from './host-mapping';
import { HostStorage } from './host-storage';
import { type Access, isAccess, TensorLease, TensorLeases } from './lease';
import { type MirrorOptions, MirrorPolicy } from './mirror-policy';
import type { Shape } from './shape';
import { sameShape } from './shape';
import { type StreamCallback, type StreamHost, type StreamOptions, streamThrough } from './stream';
import { newState, stateOf, type Tensor, type TensorOptions, tensorOf } from './tensor';
import { type CopyOwner, DeviceCopy, type TensorState } from './tensor-state';

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

/** The write leases of one acquireAll: their copies are mirrored together once all are released. */
interface WriteGroup {
  remaining: number;
  readonly written: DeviceCopy[];
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
  /** Every copy this manager holds, least recently used first. */
  readonly #lru = new Set<DeviceCopy>();
  /** Copies an `acquireAll` in progress must not evict. */
  readonly #protected = new Set<DeviceCopy>();
  /** Live pinned storages of this device and the tensors they belong to. */
  readonly #pinned = new Map<HostStorage, TensorState>();
  readonly #owner: CopyOwner;
  #lost: KeelError | undefined = undefined;
  #disposed = false;
  #mirror: MirrorPolicy | undefined = undefined;
  /** The mirror options in force when the device was lost (`rehome` carries them over). */
  #mirrorAtLoss: MirrorOptions | undefined = undefined;
  /** Tensors that had a copy here when the device was lost (`rehome` uploads them). */
  readonly #orphans = new Set<TensorState>();

  constructor(device: Device, rawOptions?: ResidencyManagerOptions) {
    const options = checkOptions<ResidencyManagerOptions>('ResidencyManager', rawOptions, OPTION_RULES);
    if (!isDevice(device)) {
      throw new KeelError(ErrorCode.INVALID_ARGUMENT, 'residency manager: `device` must be a Keel Device');
    }
    this.device = device;
    this.budgetBytes = checkBudget(options.budgetBytes);
    this.affinity = options.affinity ?? QueueAffinity.ANY;
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
    this.#owner = {
      manager: this,
      label: this.label,
      device,
      checkUsable: (what) => this.#checkUsable(what),
      readBack: (copy) => this.#readBack(copy),
      dropCopy: (copy) => this.#forget(copy),
      pinnedStorage: (state) => this.#pinnedStorage(state),
      freePinned: (storage) => this.#freePinned(storage),
    };
    device.lost.then(
      (reason) => this.#onLost(reason),
      () => {},
    );
  }

  /** A snapshot of the counters. */
  get counters(): ResidencyCounters {
    return this.#counters.snapshot();
  }

  /** True when the device (or `options.hostMapping`) provides HostMapping: `createPinned` pins. */
  get supportsPinned(): boolean {
    return this.#mapping !== undefined;
  }

  /** The reason once the device was lost or destroyed (every later call is UNAVAILABLE). */
  get lostReason(): KeelError | undefined {
    return this.#lost;
  }

  /**
   * Starts mirroring dirty device copies of this manager to host memory (see MirrorPolicy): every
   * `everyUses` released write leases of a tensor and/or every `everyMs` milliseconds. Returns the
   * policy; `policy[Symbol.dispose]()` stops it. INVALID_ARGUMENT for bad options (checkOptions),
   * FAILED_PRECONDITION while another policy of this manager is active.
   */
  mirror(options: MirrorOptions): MirrorPolicy {
    const what = 'ResidencyManager.mirror';
    this.#checkUsable(what);
    if (this.#mirror !== undefined && !this.#mirror.stopped) {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `${what}: residency manager '${this.label}' already has an active mirror policy; dispose it first`,
      );
    }
    this.#mirror = new MirrorPolicy(
      { device: this.device, owner: this.#owner, label: this.label, affinity: this.affinity },
      options,
    );
    return this.#mirror;
  }

  /** The mirror policy of this manager (active or stopped), if `mirror()` was called. */
  get mirrorPolicy(): MirrorPolicy | undefined {
    return this.#mirror;
  }

  /** The version of `tensor` its last completed mirror on this manager holds, or undefined. */
  mirroredVersion(tensor: Tensor): number | undefined {
    const state = stateOf(tensor, 'ResidencyManager.mirroredVersion');
    return this.#mirror?.mirroredVersionOf(state);
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
    if (this.#lost === undefined || this.#disposed) {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `${what}: residency manager '${this.label}' ${this.#disposed ? 'was disposed' : 'still has its device'}; rehome moves tensors off a lost device`,
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
    if (this.#mirrorAtLoss !== undefined) next.mirror(this.#mirrorAtLoss);
    for (const state of this.#orphans) {
      if (state.released || state.openLeases > 0 || state.dataLoss !== undefined) continue;
      if (!state.isHostValid()) continue;
      try {
        next.#acquire(tensorOf(state), state, 'read', what, undefined).release(Fence.empty);
      } catch {
        // Over the new budget: it stays on the host and is uploaded by its next acquire.
      }
    }
    this.#orphans.clear();
    return next;
  }

  /** Tensors with a copy (up to date or stale) on this device. */
  get residentCount(): number {
    return this.#lru.size;
  }

  /**
   * A tensor of zeros whose host storage is pinned memory of this device (a HOST_VISIBLE, MAPPING
   * buffer viewed through HostMapping): uploads to and readbacks from this device are one queueCopy,
   * with no host copy (`hostCopyBytes` unchanged). Fill it in place with `writeWith`. Without the
   * capability the tensor gets ordinary host memory (`isPinned` false) and transfers copy as usual.
   */
  createPinned<D extends DType>(dtype: D, shape: Shape, options?: TensorOptions): Tensor<D> {
    const what = 'ResidencyManager.createPinned';
    this.#checkUsable(what);
    const state = newState(dtype, shape, options, what);
    if (this.#mapping !== undefined) state.pinnedBy = this.#owner;
    state.host.storage = freshStorage(state);
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
    this.#checkUsable(what);
    const state = stateOf(tensor, what);
    if (!isAccess(access)) {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `${what}: access ${JSON.stringify(access)} is not 'read', 'write' or 'readwrite'`,
      );
    }
    return this.#acquire(tensor, state, access, what, undefined);
  }

  /**
   * Leases several tensors for one operation: no copy of the batch is evicted to make room for another
   * of the batch. The same tensor may appear once. RESOURCE_EXHAUSTED when the batch exceeds the budget.
   * On error no lease stays open (transfers already enqueued stay valid).
   */
  acquireAll(requests: readonly AcquireRequest[]): TensorLeases {
    const what = 'ResidencyManager.acquireAll';
    this.#checkUsable(what);
    if (!Array.isArray(requests)) {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `${what}: requests must be an array of { tensor, access }`,
      );
    }
    const states = new Set<TensorState>();
    let bytes = 0;
    for (let i = 0; i < requests.length; i++) {
      const request = requests[i] as AcquireRequest;
      const state = stateOf(request?.tensor, `${what}: request ${i}`);
      if (!isAccess(request.access)) {
        throw new KeelError(
          ErrorCode.INVALID_ARGUMENT,
          `${what}: request ${i}: access ${JSON.stringify(request.access)} is not 'read', 'write' or 'readwrite'`,
        );
      }
      if (states.has(state)) {
        throw new KeelError(
          ErrorCode.INVALID_ARGUMENT,
          `${what}: ${state.describe()} appears twice; use one request with 'readwrite'`,
        );
      }
      states.add(state);
      bytes += state.storageBytes;
    }
    if (bytes > this.budgetBytes) {
      throw new KeelError(
        ErrorCode.RESOURCE_EXHAUSTED,
        `${what}: the batch needs ${bytes} bytes, more than the ${this.budgetBytes}-byte budget of residency manager '${this.label}'`,
      );
    }
    for (const state of states) {
      const copy = state.copies.get(this.#owner);
      if (copy !== undefined) this.#protected.add(copy);
    }
    const leases: TensorLease[] = [];
    const group: WriteGroup | undefined =
      this.#mirror === undefined ? undefined : { remaining: requests.length, written: [] };
    try {
      for (const request of requests) {
        const lease = this.#acquire(
          request.tensor,
          stateOf(request.tensor, what),
          request.access,
          what,
          group,
        );
        leases.push(lease);
        const copy = stateOf(request.tensor, what).copies.get(this.#owner);
        if (copy !== undefined) this.#protected.add(copy);
      }
    } catch (error) {
      if (group !== undefined) group.remaining = leases.length;
      for (const lease of leases) lease.cancel();
      throw error;
    } finally {
      this.#protected.clear();
    }
    return new TensorLeases(leases);
  }

  /**
   * Copies `source` into `target` on this device (one queueCopy between their copies here, after
   * making the source's copy up to date); `target` gets new contents, every other copy of it becomes
   * stale. Returns the fence after which the copy is done. INVALID_ARGUMENT for a dtype or shape
   * mismatch or when both are the same tensor.
   */
  copy(source: Tensor, target: Tensor): Fence {
    const what = 'ResidencyManager.copy';
    this.#checkUsable(what);
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
    const leases = this.acquireAll([
      { tensor: source, access: 'read' },
      { tensor: target, access: 'write' },
    ]);
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
   * a partly rewritten tensor then reads as DATA_LOSS until it is written again.
   */
  stream(tensor: Tensor, options: StreamOptions, callback: StreamCallback): Fence {
    const what = 'ResidencyManager.stream';
    this.#checkUsable(what);
    const state = stateOf(tensor, what);
    if (typeof options !== 'object' || options === null) {
      throw new KeelError(ErrorCode.INVALID_ARGUMENT, `${what}: options must be an object`);
    }
    if (options.access !== undefined && !isAccess(options.access)) {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `${what}: access ${JSON.stringify(options.access)} is not 'read', 'write' or 'readwrite'`,
      );
    }
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
      makeRoom: (bytes, w) => this.#makeRoom(bytes, w),
    };
    return streamThrough(host, state, options, callback, what);
  }

  /**
   * Drops this device's copy of `tensor` (writing it back to the host first when it is the only
   * up-to-date copy). Returns false when there was none. FAILED_PRECONDITION while it is leased.
   */
  evict(tensor: Tensor): boolean {
    const what = 'ResidencyManager.evict';
    this.#checkUsable(what);
    const state = stateOf(tensor, what);
    state.checkLive(what);
    const copy = state.copies.get(this.#owner);
    if (copy === undefined) return false;
    if (copy.leases > 0) {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `${what}: the copy of ${state.describe()} on '${this.label}' has ${copy.leases} open lease(s)`,
      );
    }
    this.#evict(copy);
    return true;
  }

  /** Evicts every unleased copy (see `evict`); returns how many. */
  evictAll(): number {
    this.#checkUsable('ResidencyManager.evictAll');
    let evicted = 0;
    for (const copy of [...this.#lru]) {
      if (copy.leases > 0) continue;
      this.#evict(copy);
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
    if (this.#disposed) return;
    const open = [...this.#lru].filter((copy) => copy.leases > 0).length;
    if (open > 0) {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `ResidencyManager.dispose: residency manager '${this.label}' has ${open} leased copies; release the leases first`,
      );
    }
    this.#mirror?.[Symbol.dispose]();
    const written: Fence[] = [];
    if (this.#lost === undefined) {
      for (const copy of [...this.#lru]) {
        const writeBack = copy.state.isOnlyValid(copy);
        this.#evict(copy);
        if (writeBack) written.push(copy.state.host.ready);
      }
    }
    this.#disposed = true;
    await Fence.join(...written).wait();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }

  toString(): string {
    return `ResidencyManager('${this.label}')`;
  }

  // ---------------------------------------------------------------------------------------------
  // internals

  #checkUsable(what: string): void {
    if (this.#disposed) {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `${what}: residency manager '${this.label}' was disposed`,
      );
    }
    if (this.#lost !== undefined) {
      throw new KeelError(
        ErrorCode.UNAVAILABLE,
        `${what}: the device of residency manager '${this.label}' was lost or destroyed (${this.#lost.message})`,
        { cause: this.#lost },
      );
    }
  }

  #acquire<D extends DType>(
    tensor: Tensor<D>,
    state: TensorState,
    access: Access,
    what: string,
    group: WriteGroup | undefined,
  ): TensorLease<D> {
    state.checkLive(what);
    const reads = access !== 'write';
    const writes = access !== 'read';
    if (writes && state.openLeases > 0) {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `${what}: ${state.describe()} has ${state.openLeases} open lease(s); a ${access} lease needs exclusive access`,
      );
    }
    state.checkNoWriter(what);
    if (reads) state.checkReadable(what);
    if (state.storageBytes > this.budgetBytes) {
      throw new KeelError(
        ErrorCode.RESOURCE_EXHAUSTED,
        `${what}: ${state.describe()} needs ${state.storageBytes} bytes, more than the ${this.budgetBytes}-byte budget of residency manager '${this.label}'; process it in chunks with stream()`,
      );
    }
    let copy = state.copies.get(this.#owner);
    if (copy === undefined) copy = this.#allocateCopy(state, what);
    else this.#touch(copy);
    if (reads && !state.isValid(copy)) this.#fill(copy, what);
    else this.#counters.transfersAvoided++;
    // Readers wait for the bytes; writers also for every earlier user of the buffer (a failed earlier
    // use is over, and a write-only access does not need the failed contents).
    const wait =
      access === 'read'
        ? copy.ready
        : access === 'write'
          ? compactUses(Fence.join(copy.ready, copy.uses))
          : Fence.join(copy.ready, compactUses(copy.uses));
    copy.leases++;
    state.openLeases++;
    if (writes) state.writeLeases++;
    const leased = copy;
    return new TensorLease<D>(tensor, access, copy.buffer, wait, (after) => {
      const wrote = this.#endLease(leased, writes, after);
      if (group !== undefined) {
        if (wrote) group.written.push(leased);
        if (--group.remaining === 0) this.#mirror?.onWritten(group.written);
      } else if (wrote) {
        this.#mirror?.onWritten([leased]);
      }
    });
  }

  /**
   * Ends a lease: `after` is the end of the caller's use, undefined for a cancelled lease. Returns true
   * when the lease wrote a new version of a copy still held here (what a mirror policy counts).
   */
  #endLease(copy: DeviceCopy, writes: boolean, after: Fence | undefined): boolean {
    const state = copy.state;
    copy.leases--;
    state.openLeases--;
    if (writes) state.writeLeases--;
    if (after === undefined) return false;
    copy.uses = addUse(copy.uses, after);
    if (!writes) return false;
    const current = state.copies.get(this.#owner) === copy;
    if (!current && state.recovery !== undefined && state.isHostValid()) {
      // Written on the lost device after the contents were restored from a mirror: one more lost update.
      state.recovery.lostUpdates++;
      return false;
    }
    state.version++;
    copy.version = state.version;
    copy.ready = after;
    if (current) {
      state.dataLoss = undefined;
      state.recovery = undefined;
      this.#touch(copy);
      return true;
    } else {
      state.dataLoss = new KeelError(
        ErrorCode.DATA_LOSS,
        `${state.describe()}: it was written on '${this.label}', whose device was lost`,
        { cause: this.#lost },
      );
    }
    return false;
  }

  #touch(copy: DeviceCopy): void {
    if (!this.#lru.delete(copy)) return;
    this.#lru.add(copy);
  }

  #allocateCopy(state: TensorState, what: string): DeviceCopy {
    this.#makeRoom(state.storageBytes, what);
    const { buffer, ready } = this.#memory.allocate(state.storageBytes, state.label ?? 'tensor');
    const copy = new DeviceCopy(this.#owner, state, buffer, ready);
    state.copies.set(this.#owner, copy);
    this.#lru.add(copy);
    this.#counters.addResident(copy.bytes);
    return copy;
  }

  #makeRoom(bytes: number, what: string): void {
    while (this.#counters.residentBytes + bytes > this.budgetBytes) {
      const victim = this.#pickVictim();
      if (victim === undefined) {
        throw new KeelError(
          ErrorCode.RESOURCE_EXHAUSTED,
          `${what}: residency manager '${this.label}' needs ${bytes} more bytes, but ${this.#counters.residentBytes} of its ${this.budgetBytes}-byte budget are held by leased copies`,
        );
      }
      this.#evict(victim);
    }
  }

  /** The least recently used unleased copy, stale copies first. */
  #pickVictim(): DeviceCopy | undefined {
    let fallback: DeviceCopy | undefined;
    for (const copy of this.#lru) {
      if (copy.leases > 0 || this.#protected.has(copy)) continue;
      if (!copy.state.isValid(copy)) return copy;
      fallback ??= copy;
    }
    return fallback;
  }

  #evict(copy: DeviceCopy): void {
    if (copy.state.isOnlyValid(copy)) {
      this.#readBack(copy);
      this.#counters.writebacks++;
    }
    this.#forget(copy);
    this.#counters.evictions++;
  }

  /** Frees the copy's memory once its uses are over and forgets it. */
  #forget(copy: DeviceCopy): void {
    if (!this.#lru.delete(copy)) return;
    const state = copy.state;
    if (state.copies.get(this.#owner) === copy) state.copies.delete(this.#owner);
    this.#counters.residentBytes -= copy.bytes;
    if (state.released) this.#mirror?.drop(state);
    if (this.#lost === undefined) this.#memory.free(copy.buffer, Fence.join(copy.ready, copy.uses));
  }

  /** Makes `copy` hold the current version (it is stale and the tensor has contents). */
  #fill(copy: DeviceCopy, what: string): void {
    const state = copy.state;
    const storage = state.host.storage;
    if (state.isHostValid() && storage?.isPinnedTo(this.device)) {
      this.#upload(copy);
      return;
    }
    let remote: DeviceCopy | undefined;
    for (const other of state.copies.values()) {
      if (other === copy || !state.isValid(other)) continue;
      if (other.owner.device === this.device) {
        this.#copyOnDevice(other, copy);
        return;
      }
      remote ??= other;
    }
    if (state.isHostValid()) {
      this.#upload(copy);
      return;
    }
    if (remote === undefined) {
      throw new KeelError(ErrorCode.DATA_LOSS, `${what}: ${state.describe()} has no up-to-date copy left`);
    }
    // Device to device through the host: read back on the source's device, then upload here.
    remote.owner.checkUsable(what);
    remote.owner.readBack(remote);
    this.#upload(copy);
    this.#counters.crossDeviceMoves++;
  }

  /** Host → this device: one queueWrite, or one queueCopy from pinned storage of this device. */
  #upload(copy: DeviceCopy): void {
    const state = copy.state;
    const storage = state.host.storage as HostStorage;
    const n = state.storageBytes;
    const signal = freshSignal(this.device);
    const wait = Fence.join(state.host.ready, compactUses(Fence.join(copy.ready, copy.uses)));
    const target = { buffer: copy.buffer, offset: 0, length: n };
    if (storage.pinned !== undefined && storage.isPinnedTo(this.device)) {
      this.device.queueCopy(
        this.affinity,
        wait,
        signal,
        { buffer: storage.pinned.buffer, offset: 0, length: n },
        target,
      );
      this.#counters.pinnedTransferBytes += n;
    } else {
      this.device.queueWrite(this.affinity, wait, signal, storage.bytes, target);
      this.#counters.hostCopyBytes += n;
    }
    this.#counters.hostToDeviceBytes += n;
    this.#counters.transfers++;
    storage.uses = addUse(storage.uses, signal);
    copy.version = state.version;
    copy.ready = signal;
  }

  /** Another manager's copy on this same device → `copy`: one queueCopy. */
  #copyOnDevice(source: DeviceCopy, copy: DeviceCopy): void {
    const n = copy.state.storageBytes;
    const signal = freshSignal(this.device);
    const wait = Fence.join(source.ready, compactUses(Fence.join(copy.ready, copy.uses)));
    this.device.queueCopy(
      this.affinity,
      wait,
      signal,
      { buffer: source.buffer, offset: 0, length: n },
      { buffer: copy.buffer, offset: 0, length: n },
    );
    this.#counters.deviceToDeviceBytes += n;
    this.#counters.transfers++;
    source.uses = addUse(source.uses, signal);
    copy.version = copy.state.version;
    copy.ready = signal;
  }

  /** This device → host storage: one queueRead, or one queueCopy into pinned storage of this device. */
  #readBack(copy: DeviceCopy): void {
    const state = copy.state;
    const storage = ensureStorage(state);
    const n = state.storageBytes;
    const signal = freshSignal(this.device);
    const wait = Fence.join(copy.ready, compactUses(storage.uses));
    const source = { buffer: copy.buffer, offset: 0, length: n };
    if (storage.pinned !== undefined && storage.isPinnedTo(this.device)) {
      this.device.queueCopy(this.affinity, wait, signal, source, {
        buffer: storage.pinned.buffer,
        offset: 0,
        length: n,
      });
      this.#counters.pinnedTransferBytes += n;
    } else {
      this.device.queueRead(this.affinity, wait, signal, source, storage.bytes);
      this.#counters.hostCopyBytes += n;
    }
    this.#counters.deviceToHostBytes += n;
    this.#counters.transfers++;
    copy.uses = addUse(copy.uses, signal);
    storage.uses = addUse(storage.uses, signal);
    state.host.version = copy.version;
    state.host.ready = signal;
  }

  #pinnedStorage(state: TensorState): HostStorage | undefined {
    const mapping = this.#mapping;
    if (mapping === undefined || this.#lost !== undefined || this.#disposed) return undefined;
    const buffer: Buffer = this.device.createBuffer({
      usage: BufferUsage.TRANSFER | BufferUsage.MAPPING,
      memoryType: MemoryType.HOST_VISIBLE | MemoryType.HOST_COHERENT,
      byteLength: state.storageBytes,
      label: `${state.label ?? 'tensor'} (pinned)`,
    });
    if (!hasAllBits(buffer.memoryType, MemoryType.HOST_VISIBLE)) {
      // The device ignored the requested memory type: no pinned memory here (ordinary host memory).
      buffer.destroy();
      return undefined;
    }
    const view = checkMappedView(mapping.mapHostView(buffer), buffer, `residency manager '${this.label}'`);
    const storage = new HostStorage(view, { buffer, owner: this.#owner });
    this.#pinned.set(storage, state);
    return storage;
  }

  #freePinned(storage: HostStorage): void {
    this.#pinned.delete(storage);
    if (storage.pinned !== undefined && this.#lost === undefined)
      destroyWhenOver(storage.pinned.buffer, storage.uses);
  }

  #onLost(reason: KeelError): void {
    if (this.#lost !== undefined) return;
    this.#lost = reason;
    const mirror = this.#mirror;
    if (mirror !== undefined && !mirror.stopped) this.#mirrorAtLoss = mirror.options;
    mirror?.onLost();
    const loss = (state: TensorState) =>
      new KeelError(
        ErrorCode.DATA_LOSS,
        `${state.describe()}: its only up-to-date copy was on the lost device of residency manager '${this.label}'`,
        { cause: reason },
      );
    for (const copy of this.#lru) {
      const state = copy.state;
      const wasValid = state.isValid(copy);
      state.copies.delete(this.#owner);
      if (!state.released) this.#orphans.add(state);
      if (wasValid && !state.released && !state.hasValidLocation() && !mirror?.restore(state, reason)) {
        state.dataLoss = loss(state);
      }
    }
    mirror?.clearAfterLoss();
    this.#lru.clear();
    this.#counters.residentBytes = 0;
    for (const [storage, state] of this.#pinned) {
      if (state.host.storage === storage) {
        state.host.storage = undefined;
        if (state.isHostValid()) state.invalidateHost(loss(state));
        else state.host.version = -1;
      }
    }
    this.#pinned.clear();
  }
}
