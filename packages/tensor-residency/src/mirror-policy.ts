/**
 * MirrorPolicy: host mirrors of dirty device tensors, so that training survives a lost device.
 *
 * Made by `ResidencyManager.mirror(options)`; stopped by `[Symbol.dispose]()` (or the manager's
 * `dispose`). A "use" is a released write lease (`'write'`/`'readwrite'`) on the manager: a new
 * version produced on the device. A tensor is due for a mirror once `everyUses` uses happened since
 * its last mirror was issued, or a use comes `everyMs` milliseconds after it (a timer also sweeps
 * tensors left dirty and unleased for `everyMs`).
 *
 * Promises:
 * - Off the critical path: a mirror is one device-side `queueCopy` of the copy into a snapshot buffer
 *   (the only thing the next writer of the tensor waits on), then a `queueRead` of the snapshot into
 *   host memory on `affinity` (default: the manager's queues), which overlaps the following steps.
 *   Nothing blocks the calling thread.
 * - Double-buffered on the host: the read lands in a spare host buffer; the last completed mirror is
 *   never overwritten by one in flight, and becomes the new one only once the read completed.
 * - At most one mirror in flight per tensor: a due mirror whose tensor still has one in flight is
 *   deferred to the next use (`stats.skipped`).
 * - Versions: each mirror records the version it captured. The tensors released together by one
 *   `TensorLeases` (one `acquireAll`) are mirrored together, as one round, and a round's mirrors become
 *   current together (all or none), so a restore never mixes versions within a tensor or a round.
 * - On device loss, every tensor whose only up-to-date copy was on that device and that has a completed
 *   mirror is restored from it onto the host (its `recovery` says which version, and how many updates
 *   were lost); without a mirror it reads DATA_LOSS, as before. A mirror in flight at the loss is
 *   dropped (the previous one is used).
 * - Snapshot buffers are device memory outside the manager's budget (`stats.deviceBytes`).
 */
import { ErrorCode, Fence, KeelError } from '@keel/fence';
import { type Buffer, BufferUsage, checkOptions, type Device, type QueueAffinity } from '@keel/hal';
import { destroyWhenOver, freshSignal } from './device-memory';
import { addUse } from './fences';
import { dropStorage } from './host-access';
import { HostStorage } from './host-storage';
import type { CopyOwner, DeviceCopy, TensorState } from './tensor-state';

/** Options of `ResidencyManager.mirror`: at least one of `everyUses`, `everyMs`. */
export interface MirrorOptions {
  /** Mirror a tensor every this many uses (released write leases); an integer ≥ 1. */
  readonly everyUses?: number;
  /** Mirror a dirty tensor once this many milliseconds passed since its last mirror; a number ≥ 1. */
  readonly everyMs?: number;
  /** Queues the host read-backs run on (default: the manager's affinity); a transfer queue. */
  readonly affinity?: QueueAffinity;
}

/** What a MirrorPolicy did so far. */
export interface MirrorStats {
  /** Rounds completed (a round: the tensors released together by one lease or one TensorLeases). */
  readonly rounds: number;
  /** Tensor mirrors completed. */
  readonly mirrors: number;
  /** Bytes read back device → host by completed mirrors. */
  readonly mirroredBytes: number;
  /** Due rounds deferred because one of their tensors still had a mirror in flight. */
  readonly skipped: number;
  /** Rounds whose copy or read-back failed (dropped; the previous mirror stays current). */
  readonly failed: number;
  /** Rounds in flight now. */
  readonly inFlight: number;
  /** Device bytes of the snapshot buffers (outside the manager's budget). */
  readonly deviceBytes: number;
  /** Tensors restored from a mirror after the device was lost. */
  readonly restored: number;
}

/** How a tensor's contents came back after its device was lost (`Tensor.recovery`). */
export interface TensorRecovery {
  /** The version the restored contents had when they were mirrored (the tensor's version numbering then). */
  readonly mirroredVersion: number;
  /** The version that was current on the lost device. */
  readonly lostVersion: number;
  /**
   * Updates lost: `lostVersion − mirroredVersion`, plus writes released on the lost device after the
   * loss (work that was in flight). A trainer resumes that many steps back.
   */
  readonly lostUpdates: number;
  /** The label of the residency manager whose device was lost. */
  readonly manager: string;
  /** Why the device was lost. */
  readonly cause: Error;
}

/** The mutable record behind `Tensor.recovery` (internal). */
export interface RecoveryRecord {
  mirroredVersion: number;
  lostVersion: number;
  lostUpdates: number;
  readonly manager: string;
  readonly cause: Error;
}

/** What a policy needs from its manager (internal). */
export interface MirrorHost {
  readonly device: Device;
  readonly owner: CopyOwner;
  readonly label: string;
  readonly affinity: QueueAffinity;
}

const RULES = {
  everyUses: { type: 'integer', min: 1 },
  everyMs: { type: 'number', min: 1, allowInfinity: true },
  affinity: { type: 'integer', min: 1, max: 0xffffffff },
} as const;

/** Validates mirror options (INVALID_ARGUMENT naming the option); returns them with defaults. */
export function checkMirrorOptions(options: unknown): Required<MirrorOptions> & { affinity?: QueueAffinity } {
  const what = 'ResidencyManager.mirror';
  const o = checkOptions<MirrorOptions>(what, options, RULES);
  if (o.everyUses === undefined && o.everyMs === undefined) {
    throw new KeelError(
      ErrorCode.INVALID_ARGUMENT,
      `${what}: give option 'everyUses' (an integer ≥ 1) or 'everyMs' (a number ≥ 1), or both`,
    );
  }
  return {
    everyUses: o.everyUses ?? Number.POSITIVE_INFINITY,
    everyMs: o.everyMs ?? Number.POSITIVE_INFINITY,
    ...(o.affinity === undefined ? {} : { affinity: o.affinity }),
  } as Required<MirrorOptions>;
}

interface Round {
  readonly slots: readonly MirrorSlot[];
  readonly done: Fence;
  settled: boolean;
}

class MirrorSlot {
  uses = 0;
  /** The copy last written (what the sweep mirrors). */
  copy: DeviceCopy | undefined = undefined;
  snapshot: Buffer | undefined = undefined;
  /** The last completed mirror and the version it holds. */
  completed: Uint8Array | undefined = undefined;
  completedVersion = 0;
  /** The host buffer the next read lands in. */
  spare: Uint8Array | undefined = undefined;
  pending: Round | undefined = undefined;
  pendingVersion = 0;
  /** The last time a fence of the snapshot buffer's users was handed out (for freeing it). */
  snapshotUses: Fence = Fence.empty;

  constructor(public lastIssued: number) {}
}

function signaled(fence: Fence): boolean {
  try {
    return fence.query() === 'signaled';
  } catch {
    return false;
  }
}

export class MirrorPolicy implements Disposable {
  /** The options in force (defaults applied; an absent criterion is Infinity). */
  readonly everyUses: number;
  readonly everyMs: number;
  readonly affinity: QueueAffinity;
  readonly #host: MirrorHost;
  readonly #slots = new Map<TensorState, MirrorSlot>();
  readonly #timer: ReturnType<typeof setInterval> | undefined;
  #stopped = false;
  #rounds = 0;
  #mirrors = 0;
  #mirroredBytes = 0;
  #skipped = 0;
  #failed = 0;
  #inFlight = 0;
  #deviceBytes = 0;
  #restored = 0;

  /** @internal made by ResidencyManager.mirror */
  constructor(host: MirrorHost, options: MirrorOptions) {
    const o = checkMirrorOptions(options);
    this.#host = host;
    this.everyUses = o.everyUses;
    this.everyMs = o.everyMs;
    this.affinity = o.affinity ?? host.affinity;
    if (Number.isFinite(this.everyMs)) {
      this.#timer = setInterval(() => this.#sweep(), this.everyMs);
      (this.#timer as unknown as { unref?: () => void }).unref?.();
    }
  }

  /** The options this policy was made with (what `rehome` gives the next manager's policy). */
  get options(): MirrorOptions {
    return {
      ...(Number.isFinite(this.everyUses) ? { everyUses: this.everyUses } : {}),
      ...(Number.isFinite(this.everyMs) ? { everyMs: this.everyMs } : {}),
      affinity: this.affinity,
    };
  }

  /** True once disposed or once the manager's device was lost. */
  get stopped(): boolean {
    return this.#stopped;
  }

  get stats(): MirrorStats {
    return {
      rounds: this.#rounds,
      mirrors: this.#mirrors,
      mirroredBytes: this.#mirroredBytes,
      skipped: this.#skipped,
      failed: this.#failed,
      inFlight: this.#inFlight,
      deviceBytes: this.#deviceBytes,
      restored: this.#restored,
    };
  }

  /** The version held by the last completed mirror of the tensor with `state`, or undefined (internal). */
  mirroredVersionOf(state: TensorState): number | undefined {
    const slot = this.#slots.get(state);
    return slot?.completed === undefined ? undefined : slot.completedVersion;
  }

  /** Stops mirroring; mirrors in flight finish, snapshot buffers are freed after them. Idempotent. */
  [Symbol.dispose](): void {
    if (this.#stopped) return;
    this.#stop();
    for (const slot of this.#slots.values()) this.#freeSnapshot(slot);
    this.#slots.clear();
  }

  /** @internal The copies written by one release (one lease or one TensorLeases), current on this device. */
  onWritten(copies: readonly DeviceCopy[]): void {
    if (this.#stopped || copies.length === 0) return;
    const now = performance.now();
    let due = false;
    let busy = false;
    for (const copy of copies) {
      let slot = this.#slots.get(copy.state);
      if (slot === undefined) {
        slot = new MirrorSlot(now);
        this.#slots.set(copy.state, slot);
      }
      slot.uses++;
      slot.copy = copy;
      if (slot.uses >= this.everyUses || now - slot.lastIssued >= this.everyMs) due = true;
      if (slot.pending !== undefined) busy = true;
    }
    if (!due) return;
    if (busy) {
      this.#skipped++;
      return;
    }
    this.#issue(copies, now);
  }

  /** @internal The tensor was released: its mirror goes too. */
  drop(state: TensorState): void {
    const slot = this.#slots.get(state);
    if (slot === undefined) return;
    this.#slots.delete(state);
    this.#freeSnapshot(slot);
  }

  /**
   * @internal The device was lost and `state`'s only up-to-date copy was there: restores the last
   * completed mirror onto the host. Returns false when there is none (the caller reports DATA_LOSS).
   */
  restore(state: TensorState, cause: Error): boolean {
    const slot = this.#slots.get(state);
    if (slot === undefined) return false;
    const round = slot.pending;
    // A read that completed before the loss was noticed still counts (and promotes its whole round).
    if (round !== undefined && !round.settled && signaled(round.done)) this.#settle(round, true);
    const bytes = slot.completed;
    if (bytes === undefined || state.released) return false;
    slot.completed = undefined;
    const old = state.host.storage;
    state.host.storage = new HostStorage(bytes);
    if (old !== undefined) dropStorage(old);
    state.recovery = {
      mirroredVersion: slot.completedVersion,
      lostVersion: state.version,
      lostUpdates: state.version - slot.completedVersion,
      manager: this.#host.label,
      cause,
    };
    state.version++;
    state.host.version = state.version;
    state.host.ready = Fence.empty;
    state.dataLoss = undefined;
    this.#restored++;
    return true;
  }

  /** @internal The device was lost: no more mirrors; restores happen through `restore`. */
  onLost(): void {
    this.#stop();
  }

  /** @internal After the loss was handled: forget every slot (their device memory is gone). */
  clearAfterLoss(): void {
    this.#slots.clear();
    this.#deviceBytes = 0;
  }

  #stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
  }

  #issue(copies: readonly DeviceCopy[], now: number): void {
    const { device, label } = this.#host;
    const slots: MirrorSlot[] = [];
    const reads: Fence[] = [];
    try {
      for (const copy of copies) {
        const state = copy.state;
        const slot = this.#slots.get(state) as MirrorSlot;
        const n = state.storageBytes;
        if (slot.snapshot === undefined) {
          slot.snapshot = device.createBuffer({
            byteLength: n,
            usage: BufferUsage.TRANSFER,
            label: `${state.label ?? 'tensor'} (mirror of '${label}')`,
          });
          this.#deviceBytes += n;
        }
        slot.spare ??= new Uint8Array(n);
        const snapshot = { buffer: slot.snapshot, offset: 0, length: n };
        const copied = freshSignal(device);
        device.queueCopy(
          this.#host.affinity,
          copy.ready,
          copied,
          { buffer: copy.buffer, offset: 0, length: n },
          snapshot,
        );
        // The next writer of the copy waits for the snapshot, not for the read-back.
        copy.uses = addUse(copy.uses, copied);
        const read = freshSignal(device);
        device.queueRead(this.affinity, copied, read, snapshot, slot.spare);
        slot.snapshotUses = read;
        slot.pendingVersion = copy.version;
        slot.uses = 0;
        slot.lastIssued = now;
        slots.push(slot);
        reads.push(read);
      }
    } catch {
      // The device refused (lost meanwhile): what was issued fails or completes on its own; this
      // round never becomes current.
      this.#failed++;
      return;
    }
    const round: Round = { slots, done: Fence.join(...reads), settled: false };
    for (const slot of slots) slot.pending = round;
    this.#inFlight++;
    round.done.wait().then(
      () => this.#settle(round, true),
      () => this.#settle(round, false),
    );
  }

  #settle(round: Round, ok: boolean): void {
    if (round.settled) return;
    round.settled = true;
    this.#inFlight--;
    if (ok) this.#rounds++;
    else this.#failed++;
    for (const slot of round.slots) {
      if (slot.pending !== round) continue;
      slot.pending = undefined;
      if (!ok) continue;
      const previous = slot.completed;
      slot.completed = slot.spare;
      slot.completedVersion = slot.pendingVersion;
      slot.spare = previous;
      this.#mirrors++;
      this.#mirroredBytes += slot.completed?.byteLength ?? 0;
    }
  }

  /** Mirrors, as one round, every tensor left dirty and unleased for `everyMs`. */
  #sweep(): void {
    this.#host.owner.checkDevice(); // a loss not handled yet stops this policy (onLost)
    if (this.#stopped) return;
    const now = performance.now();
    const owner = this.#host.owner;
    const copies: DeviceCopy[] = [];
    for (const [state, slot] of this.#slots) {
      const copy = slot.copy;
      if (copy === undefined || slot.pending !== undefined || state.released) continue;
      if (state.writeLeases > 0 || state.copies.get(owner) !== copy || !state.isValid(copy)) continue;
      if (state.isHostValid() || slot.completedVersion === copy.version) continue;
      if (now - slot.lastIssued < this.everyMs) continue;
      copies.push(copy);
    }
    if (copies.length > 0) this.#issue(copies, now);
  }

  #freeSnapshot(slot: MirrorSlot): void {
    if (slot.snapshot === undefined) return;
    this.#deviceBytes -= slot.snapshot.byteLength;
    destroyWhenOver(slot.snapshot, slot.snapshotUses);
    slot.snapshot = undefined;
  }
}
