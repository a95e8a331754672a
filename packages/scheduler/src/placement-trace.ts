/**
 * A bounded trace of placement decisions: a ring of the most recent `capacity` records, oldest first.
 * Only allocated when tracing is on, so the hot path of an untraced scheduler allocates nothing here.
 */
import type { PlacementReason, PlacementRecord } from './placement-record';
import type { QueueOperationKind } from './queue-operation';

export class PlacementTrace {
  readonly capacity: number;
  readonly #ring: PlacementRecord[] = [];
  #next = 0;

  constructor(capacity: number) {
    this.capacity = capacity;
  }

  /** Appends a record, dropping the oldest one once `capacity` records are held. */
  push(
    sequence: number,
    op: QueueOperationKind,
    target: number,
    reason: PlacementReason,
    producers: number,
  ): void {
    const record: PlacementRecord = { sequence, op, target, reason, producers };
    if (this.#ring.length < this.capacity) this.#ring.push(record);
    else this.#ring[this.#next] = record;
    this.#next = (this.#next + 1) % this.capacity;
  }

  /** The records held, oldest first (a new array). */
  records(): PlacementRecord[] {
    const ring = this.#ring;
    if (ring.length < this.capacity) return ring.slice();
    return ring.slice(this.#next).concat(ring.slice(0, this.#next));
  }

  clear(): void {
    this.#ring.length = 0;
    this.#next = 0;
  }
}
