/**
 * Layout of a queue's control block: a small Int32Array (over a SharedArrayBuffer in task mode) through
 * which the queue's workers claim work items and the main thread learns about completions.
 *
 * Work items of all operations of a queue form one stream, numbered by a monotonic (wrapping int32)
 * index. Workers claim indices with `Atomics.add(CLAIM)` and count finished items in DONE; a barrier
 * waits until DONE reaches the index where it stands. Every operation ends with a completion item that
 * waits for all of the operation's other items, then stores COMPLETED = seq + 1 and notifies it; the
 * main thread waits on COMPLETED with `Atomics.waitAsync` (it never blocks).
 */

/** Next unclaimed work item. */
export const CTL_CLAIM = 0;
/** Number of finished work items. */
export const CTL_DONE = 1;
/** Number of completed operations (= seq + 1 of the last completed operation). */
export const CTL_COMPLETED = 2;
/** Workers sleeping in Atomics.wait on DONE (finishers notify only when non-zero). */
export const CTL_SLEEPERS = 3;
/** Start of the failure ring: word FAILED_BASE + (seq & RING_MASK) is 1 once operation seq failed. */
export const CTL_FAILED_BASE = 8;
/** Most operations of one queue in flight on its workers at once. */
export const RING_SIZE = 1024;
export const RING_MASK = RING_SIZE - 1;
export const CTL_WORDS = CTL_FAILED_BASE + RING_SIZE;

/** Iterations a worker spins on a barrier before it sleeps in Atomics.wait. */
export const SPIN_LIMIT = 2000;
