/**
 * What the scheduler reports about each placement decision (counters always; a trace record per
 * operation when tracing is on).
 */
import type { QueueOperationKind } from './queue-operation';

/**
 * Why an operation went where it did:
 * - `explicit`: the affinity mask (after intersecting with the targets, the device that holds the
 *   operation's buffers and live devices) left exactly one target — no choice was made;
 * - `producer`: the target that signals the operation's wait timepoints (work follows its data);
 * - `join`: the wait timepoints come from several allowed targets; the one that produced most of them
 *   (ties: least loaded, then lowest index);
 * - `least-loaded`: no allowed producer is known; the allowed target with the fewest operations in flight.
 */
export type PlacementReason = 'explicit' | 'producer' | 'join' | 'least-loaded';

/** The reasons in a fixed order (index = counter slot). */
export const PLACEMENT_REASONS: readonly PlacementReason[] = ['explicit', 'producer', 'join', 'least-loaded'];

/** One trace record: one submitted operation. */
export interface PlacementRecord {
  /** 0-based submission number of the scheduler (counts every successful submit). */
  readonly sequence: number;
  /** The operation's kind ('fill', 'execute', ...). */
  readonly op: QueueOperationKind;
  /** Index of the chosen target (its bit in affinity masks). */
  readonly target: number;
  readonly reason: PlacementReason;
  /** Bit mask of the targets that had produced the operation's wait timepoints (0 when none known). */
  readonly producers: number;
}

/** Counters of one target. */
export interface TargetStats {
  readonly label: string;
  /** Operations placed on this target since the scheduler was made (or its stats reset). */
  readonly submitted: number;
  /** Operations placed here whose signal has not been reached (nor failed) yet. */
  readonly inFlight: number;
  /** True once the target's device was lost or destroyed (the scheduler stops placing work there). */
  readonly lost: boolean;
}

/** A snapshot of the scheduler's counters. */
export interface SchedulerStats {
  /** Operations submitted (successfully handed to a device). */
  readonly submitted: number;
  /** Submissions per placement reason. */
  readonly byReason: Readonly<Record<PlacementReason, number>>;
  readonly targets: readonly TargetStats[];
  /**
   * Locality: `eligible` counts operations with at least one known producer inside their allowed mask;
   * `onProducer` those of them placed on one of their producers' targets; `share` = onProducer /
   * eligible (1 when nothing was eligible).
   */
  readonly locality: { readonly eligible: number; readonly onProducer: number; readonly share: number };
}
