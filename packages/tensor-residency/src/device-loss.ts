/**
 * What happens to one manager's tensors when its device is lost or destroyed, and how `rehome` moves
 * them to a new device (internal; see `ResidencyManager.rehome`).
 *
 * Promises:
 * - On loss (`onDeviceLost`, once): the manager becomes unusable (UNAVAILABLE, through
 *   `ManagerCore.checkUsable`); its mirror policy stops (its options are kept for `rehome`); every copy
 *   here is dropped, its memory with the device. A tensor whose only up-to-date copy was here is
 *   restored from its last completed mirror when there is one, else it reads DATA_LOSS; pinned host
 *   storage of the device goes too (pinned-memory.ts). Every live tensor that had a copy here is
 *   remembered as an orphan.
 * - `rehomeOrphans` uploads each orphan to the new manager from its host copy (restored or clean),
 *   skipping tensors released, leased, lost or without an up-to-date host copy; a tensor over the new
 *   budget stays on the host (its next acquire uploads it). The orphans are forgotten afterwards.
 */
import { ErrorCode, Fence, KeelError } from '@keel/fence';
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
  for (const copy of core.lru) {
    const state = copy.state;
    const wasValid = state.isValid(copy);
    state.copies.delete(core.owner);
    if (!state.released) core.orphans.add(state);
    if (wasValid && !state.released && !state.hasValidLocation() && !mirror?.restore(state, reason)) {
      state.dataLoss = loss(state);
    }
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
