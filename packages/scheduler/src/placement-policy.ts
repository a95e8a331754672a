/**
 * The placement policy: given the mask of targets an operation may use and its wait fence, picks one
 * target, and keeps the state the rules need (which target last signalled each semaphore, operations in
 * flight per target). It knows targets only by index; the Scheduler maps operations to masks and
 * targets to devices.
 *
 * Rules, in order (the reason reported with each):
 * 1. `explicit` — the allowed mask has exactly one target: it is used, whatever the producers.
 * 2. `producer` — the wait timepoints' semaphores were last signalled (through this scheduler) by
 *    targets; of those inside the allowed mask, if only one: it is used (work follows its data).
 * 3. `join` — several allowed targets produced wait timepoints: the one that produced the most of them;
 *    ties go to the least loaded, then to the lowest index.
 * 4. `least-loaded` — no allowed producer: the allowed target with the fewest operations in flight;
 *    ties rotate (the first tied target after the previous least-loaded choice), so independent work
 *    spreads over idle targets.
 * Producers outside the allowed mask are ignored: masks are respected exactly.
 *
 * Placement allocates nothing: masks are 32-bit integers, votes live in a preallocated array.
 */
import { ErrorCode, type Fence, KeelError, type Semaphore } from '@keel/fence';
import type { PlacementReason } from './placement-record';

/** Reason indices, matching PLACEMENT_REASONS. */
export const REASON_EXPLICIT = 0;
export const REASON_PRODUCER = 1;
export const REASON_JOIN = 2;
export const REASON_LEAST_LOADED = 3;

const REASON_NAMES: readonly PlacementReason[] = ['explicit', 'producer', 'join', 'least-loaded'];

/** Index of the lowest set bit of a non-zero mask. */
function lowestBit(mask: number): number {
  return 31 - Math.clz32(mask & -mask);
}

export class PlacementPolicy {
  /** Number of targets (bits 0..count-1). */
  readonly count: number;
  /** Operations placed on each target whose signal is neither reached nor failed. */
  readonly inFlight: Int32Array;
  /** Reason of the latest `choose` (a REASON_* index). */
  reason = REASON_EXPLICIT;
  /** Producer targets of the latest `choose`'s wait timepoints (all of them, allowed or not). */
  producers = 0;

  readonly #labels: readonly string[];
  /** Target that last signalled each semaphore through the scheduler. */
  readonly #producerOf = new WeakMap<Semaphore, number>();
  /** Scratch: wait timepoints per producer target; zeroed again before `choose` returns. */
  readonly #votes: Int32Array;
  /** One release callback per target (no closure per operation). */
  readonly #release: ((error?: unknown) => void)[];
  /** Targets that must not receive work or be waited on (their device was lost or destroyed). */
  #lostMask = 0;
  /** The previous least-loaded choice, where the next tie scan starts after. */
  #rotate = -1;

  constructor(labels: readonly string[]) {
    this.count = labels.length;
    this.#labels = labels;
    this.inFlight = new Int32Array(labels.length);
    this.#votes = new Int32Array(labels.length);
    this.#release = labels.map((_, index) => () => {
      this.inFlight[index]!--;
    });
  }

  /** Targets whose device was lost or destroyed. */
  get lostMask(): number {
    return this.#lostMask;
  }

  /** Marks targets lost: no more placement there, and waits on their pending timepoints are refused. */
  markLost(mask: number): void {
    this.#lostMask = (this.#lostMask | mask) >>> 0;
  }

  /** The target that last signalled `semaphore` through the scheduler, or undefined. */
  producerOf(semaphore: Semaphore): number | undefined {
    return this.#producerOf.get(semaphore);
  }

  static reasonName(reason: number): PlacementReason {
    return REASON_NAMES[reason] as PlacementReason;
  }

  /**
   * Chooses a target among `allowed` (non-empty, lost targets already removed) for an operation that
   * waits on `wait`; sets `reason` and `producers`. Throws FAILED_PRECONDITION (naming `what`) if a
   * wait timepoint is not reached, not failed, and was to be signalled by a lost target: it can never
   * be reached. A failed one is placed as usual (the device fails the operation's signal ABORTED).
   * `what` names the operation in that message (a constant string: nothing is built per call).
   */
  choose(allowed: number, wait: Fence, what: string): number {
    const timepoints = wait.timepoints;
    const votes = this.#votes;
    let producers = 0;
    for (let i = 0; i < timepoints.length; i++) {
      const tp = timepoints[i]!;
      const target = this.#producerOf.get(tp.semaphore);
      if (target === undefined) continue;
      const bit = 1 << target;
      // A pending timepoint of a lost target can never be reached. A failed one is not refused: the
      // device that takes the operation does not run it and fails its signal ABORTED (the cause is the
      // failure), so downstream waiters see the error instead of hanging.
      if (
        (this.#lostMask & bit) !== 0 &&
        tp.semaphore.failure === undefined &&
        tp.semaphore.value < tp.value
      ) {
        this.#clearVotes(producers);
        throw new KeelError(
          ErrorCode.FAILED_PRECONDITION,
          `${what}: wait timepoint '${tp.semaphore.label}'@${tp.value} was to be signalled by ${this.#labels[target]}, whose device was destroyed or lost; it can never be reached`,
        );
      }
      votes[target]!++;
      producers |= bit;
    }
    producers >>>= 0;
    this.producers = producers;

    let chosen: number;
    const local = (producers & allowed) >>> 0;
    if ((allowed & (allowed - 1)) === 0) {
      chosen = lowestBit(allowed);
      this.reason = REASON_EXPLICIT;
    } else if (local === 0) {
      chosen = this.#leastLoaded(allowed);
      this.reason = REASON_LEAST_LOADED;
    } else if ((local & (local - 1)) === 0) {
      chosen = lowestBit(local);
      this.reason = REASON_PRODUCER;
    } else {
      chosen = this.#mostVotes(local);
      this.reason = REASON_JOIN;
    }
    this.#clearVotes(producers);
    return chosen;
  }

  /**
   * Records a submission placed on `target` that signals `signal` (non-empty): one more operation in
   * flight until the signal is reached or fails, and `target` becomes the producer of every signal
   * semaphore. Every timepoint of one operation's signal is reached together, so the first one tracks it.
   */
  commit(target: number, signal: Fence): void {
    this.inFlight[target]!++;
    const timepoints = signal.timepoints;
    for (let i = 0; i < timepoints.length; i++) this.#producerOf.set(timepoints[i]!.semaphore, target);
    const first = timepoints[0]!;
    first.semaphore.onReached(first.value, this.#release[target]!);
  }

  #clearVotes(mask: number): void {
    let m = mask >>> 0;
    while (m !== 0) {
      const i = lowestBit(m);
      this.#votes[i] = 0;
      m = (m & ~(1 << i)) >>> 0;
    }
  }

  #leastLoaded(allowed: number): number {
    const n = this.count;
    const inFlight = this.inFlight;
    let best = -1;
    let bestLoad = 0;
    for (let k = 1; k <= n; k++) {
      const i = (this.#rotate + k) % n;
      if (((allowed >>> i) & 1) === 0) continue;
      const load = inFlight[i]!;
      if (best < 0 || load < bestLoad) {
        best = i;
        bestLoad = load;
      }
    }
    this.#rotate = best;
    return best;
  }

  #mostVotes(local: number): number {
    const votes = this.#votes;
    const inFlight = this.inFlight;
    let best = -1;
    let m = local;
    while (m !== 0) {
      const i = lowestBit(m);
      m = (m & ~(1 << i)) >>> 0;
      if (
        best < 0 ||
        votes[i]! > votes[best]! ||
        (votes[i] === votes[best] && inFlight[i]! < inFlight[best]!)
      ) {
        best = i;
      }
    }
    return best;
  }
}
