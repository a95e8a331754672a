/**
 * Budget and eviction of one manager's device copies (internal; see ResidencyManager).
 *
 * Promises:
 * - The bytes of the copies a manager holds (`counters.residentBytes`) never exceed its budget: a new
 *   copy first makes room by evicting unleased copies, stale ones first, then least recently used
 *   (`core.lru` is in use order: `touchCopy` moves a copy to the back). Copies leased, or protected by
 *   an `acquireAll` in progress, are never evicted; RESOURCE_EXHAUSTED when they hold the room needed.
 * - An evicted copy that is the only up-to-date one is written back to the host first (one readback),
 *   so nothing is lost; its memory is freed only once every use of it is over (never while in use).
 * - Nothing blocks: frees are queue-ordered (or deferred to the last use's fence).
 */
import { ErrorCode, Fence, KeelError } from '@keel/fence';
import type { ManagerCore } from './manager-core';
import { DeviceCopy, type TensorState } from './tensor-state';
import { readBack } from './transfers';

/** Marks `copy` as the most recently used (no-op for a copy no longer held). */
export function touchCopy(core: ManagerCore, copy: DeviceCopy): void {
  if (!core.lru.delete(copy)) return;
  core.lru.add(copy);
}

/** A new (stale) copy of `state` on this manager's device, after making room for it. */
export function allocateCopy(core: ManagerCore, state: TensorState, what: string): DeviceCopy {
  makeRoom(core, state.storageBytes, what);
  const { buffer, ready } = core.memory.allocate(state.storageBytes, state.label ?? 'tensor');
  const copy = new DeviceCopy(core.owner, state, buffer, ready);
  state.copies.set(core.owner, copy);
  core.lru.add(copy);
  core.counters.addResident(copy.bytes);
  return copy;
}

/** Evicts until `bytes` more fit in the budget; RESOURCE_EXHAUSTED when leased copies hold it. */
export function makeRoom(core: ManagerCore, bytes: number, what: string): void {
  while (core.counters.residentBytes + bytes > core.budgetBytes) {
    const victim = pickVictim(core);
    if (victim === undefined) {
      throw new KeelError(
        ErrorCode.RESOURCE_EXHAUSTED,
        `${what}: residency manager '${core.label}' needs ${bytes} more bytes, but ${core.counters.residentBytes} of its ${core.budgetBytes}-byte budget are held by leased copies`,
      );
    }
    evictCopy(core, victim);
  }
}

/** The least recently used unleased copy, stale copies first. */
function pickVictim(core: ManagerCore): DeviceCopy | undefined {
  let fallback: DeviceCopy | undefined;
  for (const copy of core.lru) {
    if (copy.leases > 0 || core.protected.has(copy)) continue;
    if (!copy.state.isValid(copy)) return copy;
    fallback ??= copy;
  }
  return fallback;
}

/** Drops `copy` (unleased), writing it back to the host first when it is the only up-to-date one. */
export function evictCopy(core: ManagerCore, copy: DeviceCopy): void {
  if (copy.state.isOnlyValid(copy)) {
    readBack(core, copy);
    core.counters.writebacks++;
  }
  forgetCopy(core, copy);
  core.counters.evictions++;
}

/** Frees the copy's memory once its uses are over and forgets it. */
export function forgetCopy(core: ManagerCore, copy: DeviceCopy): void {
  if (!core.lru.delete(copy)) return;
  const state = copy.state;
  if (state.copies.get(core.owner) === copy) state.copies.delete(core.owner);
  core.counters.residentBytes -= copy.bytes;
  if (state.released) core.mirror?.drop(state);
  if (core.lost === undefined) core.memory.free(copy.buffer, Fence.join(copy.ready, copy.uses));
}
