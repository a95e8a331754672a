/**
 * Host-side access to a tensor's bytes (internal): host writes (copy on write when queue operations
 * still use the storage) and host reads (lazy readback from an up-to-date device copy).
 */
import { ErrorCode, Fence, KeelError } from '@keel/fence';
import { usesOver } from './fences';
import { type HostStorage, plainStorage } from './host-storage';
import type { DeviceCopy, TensorState } from './tensor-state';

/**
 * Fresh storage for `state`: pinned when the tensor was created pinned and its manager can, else plain
 * (RESOURCE_EXHAUSTED naming `what` when the host cannot allocate it).
 */
export function freshStorage(state: TensorState, what: string): HostStorage {
  const owner = state.pinnedBy;
  if (owner !== undefined) {
    const pinned = owner.pinnedStorage(state);
    if (pinned !== undefined) return pinned;
  }
  return plainStorage(state.storageBytes, what, state);
}

/** Drops storage the tensor no longer uses (pinned storage is destroyed once its uses are over). */
export function dropStorage(storage: HostStorage): void {
  if (storage.pinned !== undefined) storage.pinned.owner.freePinned(storage);
}

/** The host storage, allocated if missing (a readback or write-back target); see `freshStorage`. */
export function ensureStorage(state: TensorState, what: string): HostStorage {
  let storage = state.host.storage;
  if (storage === undefined) {
    storage = freshStorage(state, what);
    state.host.storage = storage;
  }
  return storage;
}

/**
 * The storage a host write may change now: the current one when no queue operation uses it, else
 * fresh storage (copy on write; the old storage stays with the operations that use it).
 * FAILED_PRECONDITION when released or while a write lease is open.
 */
export function storageForHostWrite(state: TensorState, what: string): HostStorage {
  state.checkLive(what);
  state.checkNoWriter(what);
  // Pinned storage of a device lost in this turn goes with it (its loss is handled now), not the write.
  state.host.storage?.pinned?.owner.checkDevice();
  const current = state.host.storage;
  if (current !== undefined && usesOver(current.uses)) return current;
  const fresh = freshStorage(state, what);
  if (current !== undefined) dropStorage(current);
  state.host.storage = fresh;
  return fresh;
}

/** Records a completed host write: the host holds a new version, every other copy is stale. */
export function commitHostWrite(state: TensorState): void {
  state.version++;
  state.host.version = state.version;
  state.host.ready = Fence.empty;
  state.dataLoss = undefined;
  state.recovery = undefined;
}

/** An up-to-date device copy to read from, preferring one on the device the host storage is pinned to. */
export function pickSource(state: TensorState): DeviceCopy | undefined {
  let found: DeviceCopy | undefined;
  for (const copy of state.copies.values()) {
    if (!state.isValid(copy)) continue;
    if (state.host.storage?.isPinnedTo(copy.owner.device)) return copy;
    found ??= copy;
  }
  return found;
}

/**
 * Makes the host copy up to date (issuing one readback if it is stale) and returns the storage and the
 * fence after which it holds the current version. Throws (synchronously) FAILED_PRECONDITION for a
 * released tensor, an open write lease or a tensor without contents, DATA_LOSS when no up-to-date copy
 * survives, UNAVAILABLE when the only up-to-date copy is on a lost device.
 */
export function prepareHostRead(state: TensorState, what: string): { storage: HostStorage; ready: Fence } {
  state.checkReadable(what);
  if (!state.isHostValid()) {
    const source = pickSource(state);
    if (source === undefined) {
      throw new KeelError(ErrorCode.DATA_LOSS, `${what}: ${state.describe()} has no up-to-date copy left`);
    }
    source.owner.checkUsable(what);
    ensureStorage(state, what); // the readback's target: a failed allocation leaves nothing issued
    source.owner.readBack(source);
  }
  return { storage: state.host.storage as HostStorage, ready: state.host.ready };
}
