/** Shard sizes of data-parallel runs: even splits, speed-proportional splits, re-balancing. */
import { ErrorCode, KeelError } from '@keel/fence';
import { describe, expect, it } from 'vitest';
import { ShardBalancer, splitRows } from '../../src/data-parallel/shard-balancer';

const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

describe('splitRows', () => {
  it('splits evenly, sums to the batch and gives everyone a row', () => {
    expect(splitRows(256, [1, 1], 1)).toEqual([128, 128]);
    expect(splitRows(10, [1, 1, 1], 1)).toEqual([4, 3, 3]);
    expect(splitRows(3, [1, 1, 1], 8)).toEqual([1, 1, 1]);
  });

  it('splits in proportion to speed, in multiples of the granule', () => {
    const rows = splitRows(256, [15, 1], 8);
    expect(sum(rows)).toBe(256);
    expect(rows.every((r) => r % 8 === 0 && r >= 8)).toBe(true);
    expect(rows[0]).toBe(240);
    expect(splitRows(256, [1, 1000], 8)[0]).toBe(8);
  });

  it('refuses a batch smaller than the device count', () => {
    expect(() => splitRows(1, [1, 1], 1)).toThrow(KeelError);
    try {
      splitRows(1, [1, 1], 1);
    } catch (error) {
      expect(KeelError.is(error, ErrorCode.INVALID_ARGUMENT)).toBe(true);
    }
  });
});

describe('ShardBalancer', () => {
  it("'measured' moves rows to the faster device when due, 'even' never does", () => {
    const measured = new ShardBalancer('measured', 256, 2, 8, 2);
    const even = new ShardBalancer('even', 256, 2, 8, 2);
    expect(measured.rows).toEqual([128, 128]);
    for (let step = 0; step < 30; step++) {
      // Device 1 takes 4× as long for the same rows.
      const ms = measured.rows.map((r, d) => r * (d === 0 ? 0.1 : 0.4));
      measured.observe(measured.rows, ms);
      measured.maybeRebalance(step);
      even.observe(even.rows, [1, 4]);
      even.maybeRebalance(step);
    }
    expect(measured.rows[0]).toBeGreaterThan(measured.rows[1]!);
    expect(sum(measured.rows)).toBe(256);
    // Converges (halfway steps, one granule of tolerance) to equal compute times: 4:1 = 204.8 / 51.2.
    expect(measured.rows[0]).toBeGreaterThanOrEqual(200);
    expect(measured.rows[0]).toBeLessThanOrEqual(208);
    expect(measured.plans).toBeGreaterThanOrEqual(2);
    expect(even.rows).toEqual([128, 128]);
  });

  it('with a fixed cost per step, settles where the compute times are equal (not at a starved device)', () => {
    // Device 1 (a GPU on a slow link, say) costs 20 ms per step plus 0.01 ms per row; device 0 0.2 ms
    // per row: equal times at r0 ≈ 119 (23.8 ms each).
    const b = new ShardBalancer('measured', 256, 2, 8, 2);
    const time = (rows: readonly number[]): number[] => [rows[0]! * 0.2, 20 + rows[1]! * 0.01];
    for (let step = 0; step < 60; step++) {
      b.observe(b.rows, time(b.rows));
      b.maybeRebalance(step);
    }
    const [t0, t1] = time(b.rows);
    expect(Math.abs(t0! - t1!)).toBeLessThan(8 * 0.2 + 1);
  });

  it('keeps the shards of devices of equal speed', () => {
    const b = new ShardBalancer('measured', 256, 2, 8, 1);
    for (let step = 0; step < 5; step++) {
      b.observe(
        b.rows,
        b.rows.map((r) => r * 0.1),
      );
      expect(b.maybeRebalance(step)).toBe(false);
    }
    expect(b.rows).toEqual([128, 128]);
  });

  it('measures a step as the shards it ran, skips the first on new shards, plans one change at a time', () => {
    // Device 1 takes 4× as long per row. The run gives a plan to the step after next (the next
    // step's shard is already uploaded), so the step after the plan still runs the old shards.
    const b = new ShardBalancer('measured', 256, 2, 8, 1);
    const old = b.rows.slice();
    const ms = (rows: readonly number[]): number[] => [rows[0]! * 0.1, rows[1]! * 0.4];
    b.observe(old, ms(old));
    expect(b.maybeRebalance(1)).toBe(true);
    const planned = b.rows.slice();
    expect(planned[0]).toBeGreaterThan(128);
    // Step 2 ran the old shards: measured as theirs, and no second plan while the first is on its way.
    b.observe(old, ms(old));
    expect(b.maybeRebalance(2)).toBe(false);
    expect(b.rows).toEqual(planned);
    expect(b.speeds[0]).toBeCloseTo(10, 6);
    // Step 3, the first on the new shards, replays new recordings: skipped (speeds unchanged, no plan).
    b.observe(planned, [1000, 1000]);
    expect(b.speeds[0]).toBeCloseTo(10, 6);
    expect(b.maybeRebalance(3)).toBe(false);
    // Step 4 measures the new shards afresh; the next plan may follow.
    b.observe(planned, ms(planned));
    expect(b.speeds[1]).toBeCloseTo(2.5, 6);
    expect(b.maybeRebalance(4)).toBe(true);
    expect(b.plans).toBe(2);
  });
});
