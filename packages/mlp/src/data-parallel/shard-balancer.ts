/**
 * Shard sizes of a data-parallel run: how many rows of each global batch each device trains on.
 *
 * `even`: the batch split as evenly as possible (earlier devices take the remainder), fixed for the run.
 * `measured`: shards moved halfway toward proportional to each device's measured speed (rows per
 * millisecond of compute, an exponential moving average over the steps run on the current shards, the
 * first step on them skipped: it replays new recordings for the first time), re-planned every `every`
 * steps; shards are multiples of `granule` rows (the last device takes what is left), at least one
 * granule each, and change only when some shard would move by at least one granule, so a run of
 * devices of equal speed keeps its shards. Deterministic given the same measurements.
 *
 * A plan (`rows` after `maybeRebalance` returned true) takes effect when the run gives it to a step;
 * every observation says which shards its step ran (`observe(rows, …)`), so a step that still ran the
 * old shards is measured as theirs, and no new plan is made while one has not reached a measured step.
 */
import { ErrorCode, KeelError } from '@keel/fence';

export type BalanceMode = 'even' | 'measured';

/** Splits `total` rows over `weights` (non-negative; largest-remainder rounding to `granule`). */
export function splitRows(total: number, weights: readonly number[], granule: number): number[] {
  const n = weights.length;
  if (!Number.isInteger(total) || total < n) {
    throw new KeelError(
      ErrorCode.INVALID_ARGUMENT,
      `shards: a batch of ${total} rows cannot give each of ${n} devices at least one row`,
    );
  }
  const g = Math.max(1, Math.min(granule, Math.floor(total / n)));
  const units = Math.floor(total / g);
  const sum = weights.reduce((a, w) => a + (Number.isFinite(w) && w > 0 ? w : 0), 0);
  const share = weights.map((w) => (sum > 0 && Number.isFinite(w) && w > 0 ? w / sum : 1 / n));
  // Each device gets its share rounded down (at least one unit); the units left go to the largest
  // remainders (ties: lower index); units over (from the one-unit floor) come off the largest shards.
  const exact = share.map((s) => s * units);
  const rows = exact.map((e) => Math.max(1, Math.floor(e)));
  let left = units - rows.reduce((a, b) => a + b, 0);
  const order = exact
    .map((e, i) => [e - Math.floor(e), i] as const)
    .sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  for (let j = 0; left > 0; j = (j + 1) % n, left--) rows[order[j]![1]]! += 1;
  while (left < 0) {
    let big = 0;
    for (let i = 1; i < n; i++) if (rows[i]! > rows[big]!) big = i;
    rows[big]! -= 1;
    left++;
  }
  const out = rows.map((u) => u * g);
  out[n - 1]! += total - units * g;
  return out;
}

export class ShardBalancer {
  readonly mode: BalanceMode;
  readonly total: number;
  readonly granule: number;
  readonly every: number;
  #rows: number[];
  /** The shards the moving average is for (those of the last step observed). */
  #measuredRows: number[];
  readonly #speed: Float64Array;
  #samples = 0;
  /** Plans made (`maybeRebalance` returned true). */
  plans = 0;

  constructor(mode: BalanceMode, total: number, devices: number, granule: number, every: number) {
    this.mode = mode;
    this.total = total;
    this.granule = granule;
    this.every = every;
    this.#rows = splitRows(total, new Array<number>(devices).fill(1), mode === 'even' ? 1 : granule);
    this.#measuredRows = this.#rows.slice();
    this.#speed = new Float64Array(devices);
  }

  /** The planned shard sizes (rows per device): what the next step given shards takes. */
  get rows(): readonly number[] {
    return this.#rows;
  }

  /** Measured speed of each device (rows per ms of compute; 0 before any measurement). */
  get speeds(): readonly number[] {
    return Array.from(this.#speed);
  }

  /**
   * Records one step's timings: `computeMs[d]` for `rows[d]` rows on device d (the shards that step
   * ran). The first step on shards other than those measured so far restarts the average (speeds at
   * other shard sizes do not predict these: fixed costs per step make rows/ms depend on the rows) and
   * is not counted (first replay of new recordings).
   */
  observe(rows: readonly number[], computeMs: readonly number[]): void {
    if (rows.some((r, d) => r !== this.#measuredRows[d])) {
      this.#measuredRows = rows.slice();
      this.#samples = 0;
      return;
    }
    for (let d = 0; d < this.#speed.length; d++) {
      const ms = Math.max(computeMs[d]!, 1e-3);
      const speed = rows[d]! / ms;
      this.#speed[d] = this.#samples === 0 ? speed : 0.7 * this.#speed[d]! + 0.3 * speed;
    }
    this.#samples++;
  }

  /**
   * After `step` (0-based) was observed: re-plans the shards when due (and no plan is still on its way
   * to a measured step). Returns true if they changed.
   */
  maybeRebalance(step: number): boolean {
    if (this.mode !== 'measured' || this.#samples === 0 || (step + 1) % this.every !== 0) return false;
    if (this.#rows.some((r, d) => r !== this.#measuredRows[d])) return false;
    // Shards proportional to speed equalize the devices' compute times at the fixed point; halfway
    // steps toward it damp the oscillation that fixed per-step costs cause.
    const target = splitRows(this.total, Array.from(this.#speed), this.granule);
    const moves = (rows: readonly number[]): boolean =>
      rows.some((r, d) => Math.abs(r - this.#rows[d]!) >= this.granule);
    if (!moves(target)) return false;
    const halfway = splitRows(
      this.total,
      target.map((r, d) => (r + this.#rows[d]!) / 2),
      this.granule,
    );
    // Within a granule or two of the target, halfway rounds back to where it is: take the target.
    this.#rows = moves(halfway) ? halfway : target;
    this.plans++;
    return true;
  }
}
