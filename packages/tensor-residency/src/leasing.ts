/**
 * Leasing one manager's device copies (internal; see `ResidencyManager.acquire` / `acquireAll` and
 * the TensorLease protocol in lease.ts).
 *
 * Promises:
 * - Exclusive writers, shared readers: a 'write'/'readwrite' lease needs no other open lease of the
 *   tensor, any lease needs no open write lease (FAILED_PRECONDITION otherwise); reads need contents
 *   (FAILED_PRECONDITION without, the DATA_LOSS error when lost).
 * - A tensor larger than the whole budget is RESOURCE_EXHAUSTED (naming the tensor; `stream()` instead).
 * - A lease makes the copy up to date when it reads (at most one transfer, none if it already is:
 *   `transfersAvoided`); its `wait` covers the bytes, and for writers every earlier use of the buffer.
 * - Releasing a write lease makes its copy the only up-to-date one (new version, `ready` = `after`)
 *   and tells the mirror policy (`onWritten`): per lease, or once per `acquireAll` batch when all its
 *   leases are released. A write released on a copy of a lost device is counted as a lost update
 *   (after a restore from a mirror) or makes the tensor read DATA_LOSS.
 * - `leaseAll` never evicts a copy of the batch for another of the batch; on error no lease stays open.
 * - A copy allocated for a lease whose transfer fails to enqueue is forgotten (memory freed, not
 *   counted, not in `locations`): a failed acquire leaves no copy behind.
 */
import { ErrorCode, Fence, KeelError } from '@keel/fence';
import type { DType } from './dtype';
import { allocateCopy, forgetCopy, touchCopy } from './eviction';
import { addUse, compactUses } from './fences';
import { type Access, isAccess, TensorLease, TensorLeases } from './lease';
import type { ManagerCore } from './manager-core';
import type { AcquireRequest } from './residency-manager';
import { stateOf, type Tensor } from './tensor';
import type { DeviceCopy, TensorState } from './tensor-state';
import { fillCopy } from './transfers';

/** The write leases of one acquireAll: their copies are mirrored together once all are released. */
interface WriteGroup {
  remaining: number;
  readonly written: DeviceCopy[];
}

/** Leases the copy of `tensor` (whose state is `state`) on `core`'s device; `group` for acquireAll. */
export function leaseCopy<D extends DType>(
  core: ManagerCore,
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
  if (state.storageBytes > core.budgetBytes) {
    throw new KeelError(
      ErrorCode.RESOURCE_EXHAUSTED,
      `${what}: ${state.describe()} needs ${state.storageBytes} bytes, more than the ${core.budgetBytes}-byte budget of residency manager '${core.label}'; process it in chunks with stream()`,
    );
  }
  let copy = state.copies.get(core.owner);
  const fresh = copy === undefined;
  if (copy === undefined) copy = allocateCopy(core, state, what);
  else touchCopy(core, copy);
  if (reads && !state.isValid(copy)) {
    try {
      fillCopy(core, copy, what);
    } catch (error) {
      // Nothing was enqueued into the new copy: forget it, so that no stale copy stays registered.
      if (fresh) {
        try {
          forgetCopy(core, copy);
        } catch {
          // The device went away meanwhile (its dealloca refused): its memory is gone with it.
        }
      }
      throw error;
    }
  } else {
    core.counters.transfersAvoided++;
  }
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
    core.checkDevice(); // a device lost in this turn: the lease ends on a copy of a lost device
    const wrote = endLease(core, leased, writes, after);
    if (group !== undefined) {
      if (wrote) group.written.push(leased);
      if (--group.remaining === 0) core.mirror?.onWritten(group.written);
    } else if (wrote) {
      core.mirror?.onWritten([leased]);
    }
  });
}

/**
 * Ends a lease: `after` is the end of the caller's use, undefined for a cancelled lease. Returns true
 * when the lease wrote a new version of a copy still held here (what a mirror policy counts).
 */
function endLease(core: ManagerCore, copy: DeviceCopy, writes: boolean, after: Fence | undefined): boolean {
  const state = copy.state;
  copy.leases--;
  state.openLeases--;
  if (writes) state.writeLeases--;
  if (after === undefined) return false;
  copy.uses = addUse(copy.uses, after);
  if (!writes) return false;
  const current = state.copies.get(core.owner) === copy;
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
    touchCopy(core, copy);
    return true;
  } else {
    state.dataLoss = new KeelError(
      ErrorCode.DATA_LOSS,
      `${state.describe()}: it was written on '${core.label}', whose device was lost`,
      { cause: core.lost },
    );
  }
  return false;
}

/** Validates a batch of requests and leases them together (ResidencyManager.acquireAll). */
export function leaseAll(core: ManagerCore, requests: readonly AcquireRequest[], what: string): TensorLeases {
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
  if (bytes > core.budgetBytes) {
    throw new KeelError(
      ErrorCode.RESOURCE_EXHAUSTED,
      `${what}: the batch needs ${bytes} bytes, more than the ${core.budgetBytes}-byte budget of residency manager '${core.label}'`,
    );
  }
  for (const state of states) {
    const copy = state.copies.get(core.owner);
    if (copy !== undefined) core.protected.add(copy);
  }
  const leases: TensorLease[] = [];
  const group: WriteGroup | undefined =
    core.mirror === undefined ? undefined : { remaining: requests.length, written: [] };
  try {
    for (const request of requests) {
      const lease = leaseCopy(
        core,
        request.tensor,
        stateOf(request.tensor, what),
        request.access,
        what,
        group,
      );
      leases.push(lease);
      const copy = stateOf(request.tensor, what).copies.get(core.owner);
      if (copy !== undefined) core.protected.add(copy);
    }
  } catch (error) {
    if (group !== undefined) group.remaining = leases.length;
    for (const lease of leases) lease.cancel();
    throw error;
  } finally {
    core.protected.clear();
  }
  return new TensorLeases(leases);
}
