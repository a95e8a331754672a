/**
 * Pinned host storage of one manager's device (internal; see `ResidencyManager.createPinned`).
 *
 * Promises:
 * - `pinnedStorage` gives a tensor host storage that is a HOST_VISIBLE, MAPPING buffer of this device
 *   viewed through HostMapping, so uploads to and readbacks from this device are one queueCopy; it
 *   gives undefined (ordinary host memory) without HostMapping, once the manager is disposed or its
 *   device lost, or when the device ignores the requested memory type.
 * - `freePinned` destroys the buffer only once every use of the storage is over.
 * - After a device loss, `dropPinnedAfterLoss` detaches every pinned storage of that device from its
 *   tensor: a tensor whose only up-to-date bytes were there reads DATA_LOSS.
 */
import type { KeelError } from '@keel/fence';
import { type Buffer, BufferUsage, hasAllBits, MemoryType } from '@keel/hal';
import { destroyWhenOver } from './device-memory';
import { checkMappedView } from './host-mapping';
import { HostStorage } from './host-storage';
import type { ManagerCore } from './manager-core';
import type { TensorState } from './tensor-state';

/** Fresh pinned storage for `state` on this device, or undefined when it cannot make one. */
export function pinnedStorage(core: ManagerCore, state: TensorState): HostStorage | undefined {
  const mapping = core.mapping;
  if (mapping === undefined || core.disposed || core.checkDevice() !== undefined) return undefined;
  const buffer: Buffer = core.device.createBuffer({
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
  const view = checkMappedView(mapping.mapHostView(buffer), buffer, `residency manager '${core.label}'`);
  const storage = new HostStorage(view, { buffer, owner: core.owner });
  core.pinned.set(storage, state);
  return storage;
}

/** Destroys pinned storage once its uses are over. */
export function freePinned(core: ManagerCore, storage: HostStorage): void {
  core.pinned.delete(storage);
  if (storage.pinned !== undefined && core.checkDevice() === undefined)
    destroyWhenOver(storage.pinned.buffer, storage.uses);
}

/** The device was lost: its pinned storages are gone; `loss` is the DATA_LOSS of a tensor. */
export function dropPinnedAfterLoss(core: ManagerCore, loss: (state: TensorState) => KeelError): void {
  for (const [storage, state] of core.pinned) {
    if (state.host.storage === storage) {
      state.host.storage = undefined;
      if (state.isHostValid()) state.invalidateHost(loss(state));
      else state.host.version = -1;
    }
  }
  core.pinned.clear();
}
