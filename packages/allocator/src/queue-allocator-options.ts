/**
 * The options of a QueueAllocator and of one alloca, the rules `checkOptions` holds the allocator's
 * options to, and the default `onError` (one console warning per allocator).
 */
import type { OptionRules } from '@keel/hal';
import { LABEL, POSITIVE } from './pool-support';

export interface QueueAllocatorOptions {
  /** A name for error messages. */
  readonly label?: string;
  /**
   * Rule b and d take a dying block of at most this many times the requested size (default 2), so a
   * small request does not pin a large block.
   */
  readonly reuseSlack?: number;
  /** Dominated candidates examined per wait timepoint (default 32): keeps rule b O(1). */
  readonly maxCandidates?: number;
  /**
   * `destroy()` also destroys the pool (default true). With false it gives the blocks it holds back to
   * the pool instead (live, pending and dying allocations' blocks; quarantined ones stay reserved).
   */
  readonly destroyPool?: boolean;
  /**
   * Receives exceptions a semaphore throws while the allocator signals or fails the caller's fences
   * (a timepoint already passed is not one: it is left alone, as by every queue operation). Default: one
   * console warning per allocator. Never called for the allocator's own errors; its state is never
   * affected, and an exception of `onError` itself is dropped.
   */
  readonly onError?: (error: unknown) => void;
}

/** Options of one alloca. */
export interface QueueAllocaOptions {
  /** Alignment of the block's offset, a power of two; defaults to the pool's alignment. */
  readonly alignment?: number;
  /** A name for error messages. */
  readonly label?: string;
}

/** The options QueueAllocator takes (unknown keys, wrong types and ranges are INVALID_ARGUMENT). */
export const OPTION_RULES: OptionRules = {
  label: LABEL,
  reuseSlack: { type: 'number', min: 1 },
  maxCandidates: POSITIVE,
  destroyPool: { type: 'boolean' },
  onError: { type: 'function' },
};

/** The default `onError`: one console warning per allocator (never a throw from a microtask). */
export function warnOnce(what: string): (error: unknown) => void {
  let warned = false;
  return (error: unknown): void => {
    if (warned) return;
    warned = true;
    globalThis.console?.warn(
      `${what}: a semaphore threw while completing a fence (further ones are not reported):`,
      error,
    );
  };
}
