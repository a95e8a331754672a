/**
 * Transfers of one manager (internal; see ResidencyManager): host → device uploads, device → host
 * readbacks, copies between two managers of the same device, and moves between devices through the
 * host. Every transfer is counted once, by the manager issuing it (see counters.ts).
 *
 * Promises:
 * - Each transfer is one queue operation (queueWrite / queueRead, or one queueCopy when the host
 *   storage is pinned memory of this device or the source is on this device), enqueued with fences:
 *   it waits for the source's bytes and for every earlier use of the target, and its signal becomes
 *   the target's `ready` fence. Nothing blocks the calling thread.
 * - Bookkeeping happens when the transfer is issued: the target holds the source's version from then
 *   on (readers wait on `ready`), and the source's `uses` cover the transfer.
 * - `fillCopy` picks the cheapest source: pinned host storage of this device, then a copy on this
 *   device, then the host, then another device (read back, then uploaded: one `crossDeviceMoves`);
 *   DATA_LOSS when no up-to-date copy is left, UNAVAILABLE when the source's device is gone.
 * - A readback marks the host up to date when issued; until it lands it is listed in
 *   `core.readbacks`, so that a device loss before then makes the host copy stale (device-loss.ts).
 */
import { ErrorCode, Fence, KeelError } from '@keel/fence';
import { freshSignal } from './device-memory';
import { addUse, compactUses } from './fences';
import { ensureStorage } from './host-access';
import type { HostStorage } from './host-storage';
import type { ManagerCore } from './manager-core';
import type { DeviceCopy, TensorState } from './tensor-state';

/** How a failed host allocation names a readback whose caller did not allocate first (eviction). */
const WRITE_BACK = 'ResidencyManager write-back';

/** Makes `copy` hold the current version (it is stale and the tensor has contents). */
export function fillCopy(core: ManagerCore, copy: DeviceCopy, what: string): void {
  const state = copy.state;
  const storage = state.host.storage;
  if (state.isHostValid() && storage?.isPinnedTo(core.device)) {
    upload(core, copy);
    return;
  }
  let remote: DeviceCopy | undefined;
  for (const other of state.copies.values()) {
    if (other === copy || !state.isValid(other)) continue;
    if (other.owner.device === core.device) {
      copyOnDevice(core, other, copy);
      return;
    }
    remote ??= other;
  }
  if (state.isHostValid()) {
    upload(core, copy);
    return;
  }
  if (remote === undefined) {
    throw new KeelError(ErrorCode.DATA_LOSS, `${what}: ${state.describe()} has no up-to-date copy left`);
  }
  // Device to device through the host: read back on the source's device, then upload here.
  remote.owner.checkUsable(what);
  ensureStorage(state, what); // the move's host staging: a failed allocation leaves nothing issued
  remote.owner.readBack(remote);
  upload(core, copy);
  core.counters.crossDeviceMoves++;
}

/** Host → this device: one queueWrite, or one queueCopy from pinned storage of this device. */
function upload(core: ManagerCore, copy: DeviceCopy): void {
  const device = core.device;
  const state = copy.state;
  const storage = state.host.storage as HostStorage;
  const n = state.storageBytes;
  const signal = freshSignal(device);
  const wait = Fence.join(state.host.ready, compactUses(Fence.join(copy.ready, copy.uses)));
  const target = { buffer: copy.buffer, offset: 0, length: n };
  if (storage.pinned !== undefined && storage.isPinnedTo(device)) {
    device.queueCopy(
      core.affinity,
      wait,
      signal,
      { buffer: storage.pinned.buffer, offset: 0, length: n },
      target,
    );
    core.counters.pinnedTransferBytes += n;
  } else {
    device.queueWrite(core.affinity, wait, signal, storage.bytes, target);
    core.counters.hostCopyBytes += n;
  }
  core.counters.hostToDeviceBytes += n;
  core.counters.transfers++;
  storage.uses = addUse(storage.uses, signal);
  copy.version = state.version;
  copy.ready = signal;
}

/** Another manager's copy on this same device → `copy`: one queueCopy. */
function copyOnDevice(core: ManagerCore, source: DeviceCopy, copy: DeviceCopy): void {
  const n = copy.state.storageBytes;
  const signal = freshSignal(core.device);
  const wait = Fence.join(source.ready, compactUses(Fence.join(copy.ready, copy.uses)));
  core.device.queueCopy(
    core.affinity,
    wait,
    signal,
    { buffer: source.buffer, offset: 0, length: n },
    { buffer: copy.buffer, offset: 0, length: n },
  );
  core.counters.deviceToDeviceBytes += n;
  core.counters.transfers++;
  source.uses = addUse(source.uses, signal);
  copy.version = copy.state.version;
  copy.ready = signal;
}

/** This device → host storage: one queueRead, or one queueCopy into pinned storage of this device. */
export function readBack(core: ManagerCore, copy: DeviceCopy): void {
  const device = core.device;
  const state = copy.state;
  const storage = ensureStorage(state, WRITE_BACK);
  const n = state.storageBytes;
  const signal = freshSignal(device);
  const wait = Fence.join(copy.ready, compactUses(storage.uses));
  const source = { buffer: copy.buffer, offset: 0, length: n };
  if (storage.pinned !== undefined && storage.isPinnedTo(device)) {
    device.queueCopy(core.affinity, wait, signal, source, {
      buffer: storage.pinned.buffer,
      offset: 0,
      length: n,
    });
    core.counters.pinnedTransferBytes += n;
  } else {
    device.queueRead(core.affinity, wait, signal, source, storage.bytes);
    core.counters.hostCopyBytes += n;
  }
  core.counters.deviceToHostBytes += n;
  core.counters.transfers++;
  copy.uses = addUse(copy.uses, signal);
  storage.uses = addUse(storage.uses, signal);
  state.host.version = copy.version;
  state.host.ready = signal;
  trackReadback(core, state, signal);
}

/**
 * Remembers that the host copy of `state` arrives through `signal` from this device until it lands:
 * a loss before then leaves the host without the bytes (device-loss.ts). A failed readback stays
 * listed until the loss is handled (its failure may be the loss itself) or the tensor is released.
 */
function trackReadback(core: ManagerCore, state: TensorState, signal: Fence): void {
  core.readbacks.set(state, signal);
  signal.onReached((error) => {
    if (core.readbacks.get(state) !== signal) return;
    if (error === undefined || core.lost !== undefined || state.released) core.readbacks.delete(state);
  });
}
