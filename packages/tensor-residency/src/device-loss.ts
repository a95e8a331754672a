/**
 * What happens to one manager's tensors when its device is lost or destroyed, and how `rehome` moves
 * them to a new device (internal; see `ResidencyManager.rehome`).
 *
 * Promises:
 * - On loss (`onDeviceLost`, once: when `device.lost` resolves, or earlier when
 *   `ManagerCore.checkDevice` finds `device.lostReason` set, e.g. a call in the same turn as
 *   `destroy()`): the manager becomes unusable (UNAVAILABLE, through `ManagerCore.checkUsable`); its
 *   mirror policy stops (its options are kept for `rehome`); every copy here is dropped, its memory
 *   with the device. A tensor whose only up-to-date copy was here is
 *   restored from its last completed mirror when there is one, else it reads DATA_LOSS; pinned host
 *   storage of the device goes too (pinned-memory.ts). Every live tensor that had a copy here is
 *   remembered as an orphan.
 * - A host copy still arriving from this device (a readback or an eviction's write-back issued but not
 *   landed: `core.readbacks`) never will: it is stale from the loss on, so a tensor whose only
 *   up-to-date copy was that one is restored from its mirror or reads DATA_LOSS, as if it had still
 *   been on the device (not ABORTED forever). A readback that landed before the loss keeps its bytes.
 * - `rehomeOrphans` uploads each orphan to the new manager from its host copy (restored or clean),
 *   skipping tensors released, leased, lost or without an up-to-date host copy; a tensor over the new
 *   budget stays on the host (its next acquire uploads it). The orphans are forgotten afterwards.
 */
import { ErrorCode, Fence, KeelError } from '@keel/fence';
import { isReached } from './fences';
import { leaseCopy } from './leasing';
import type { ManagerCore } from './manager-core';
import { dropPinnedAfterLoss } from './pinned-memory';
import { tensorOf } from './tensor';
import type { TensorState } from './tensor-state';

/** The device of `core` was lost or destroyed with `reason`. Idempotent. */
export function onDeviceLost(core: ManagerCore, reason: KeelError): void {
  if (core.lost !== undefined) return;
  core.lost = reason;
  const mirror = core.mirror;
  if (mirror !== undefined && !mirror.stopped) core.mirrorAtLoss = mirror.options;
  mirror?.onLost();
  const loss = (state: TensorState) =>
    new KeelError(
      ErrorCode.DATA_LOSS,
      `${state.describe()}: its only up-to-date copy was on the lost device of residency manager '${core.label}'`,
      { cause: reason },
    );
  // Host copies that were to arrive from this device hold nothing: they are stale from now on.
  const unlanded: TensorState[] = [];
  for (const [state, signal] of core.readbacks) {
    if (state.released || state.host.ready !== signal || isReached(signal) || !state.isHostValid()) continue;
    state.host.version = -1;
    unlanded.push(state);
  }
  core.readbacks.clear();
  for (const copy of core.lru) {
    const state = copy.state;
    const wasValid = state.isValid(copy);
    state.copies.delete(core.owner);
    if (!state.released) core.orphans.add(state);
    if (wasValid && !state.released && !state.hasValidLocation() && !mirror?.restore(state, reason)) {
      state.dataLoss = loss(state);
    }
  }
  // Those whose copy here was evicted (a write-back in flight) or that no copy here made up to date.
  for (const state of unlanded) {
    if (state.dataLoss !== undefined || state.hasValidLocation()) continue;
    if (!mirror?.restore(state, reason)) state.dataLoss = loss(state);
  }
  mirror?.clearAfterLoss();
  core.lru.clear();
  core.counters.residentBytes = 0;
  dropPinnedAfterLoss(core, loss);
}

/** Uploads the orphans of the lost `core` onto the manager of `next` (see the contract above). */
export function rehomeOrphans(core: ManagerCore, next: ManagerCore, what: string): void {
  for (const state of core.orphans) {
    if (state.released || state.openLeases > 0 || state.dataLoss !== undefined) continue;
    if (!state.isHostValid()) continue;
    try {
      leaseCopy(next, tensorOf(state), state, 'read', what, undefined).release(Fence.empty);
    } catch {
      // Over the new budget: it stays on the host and is uploaded by its next acquire.
    }
  }
  core.orphans.clear();
}
