import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Block, PassthroughPool, type Pool, RingPool, TlsfPool } from '../src/index';
import { blockProblem, CountingProvider, findOverlap, ResizableCountingProvider } from './helpers';

/** Property runs take a few seconds on a loaded machine; a hang fails instead of blocking. */
const TIMEOUT_MS = 60_000;

type Op =
  | { readonly kind: 'reserve'; readonly size: number; readonly alignLog2: number }
  | { readonly kind: 'release'; readonly pick: number }
  | { readonly kind: 'trim' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('reserve' as const),
      size: fc.oneof(fc.integer({ min: 0, max: 64 }), fc.integer({ min: 0, max: 20_000 })),
      alignLog2: fc.integer({ min: 0, max: 12 }),
    }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('release' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('trim' as const) }) },
);

interface Live {
  readonly block: Block<ArrayBuffer>;
  readonly alignment: number;
}

/** Runs `ops`, checking after each step that live blocks are disjoint, aligned and inside their slab. */
function run(
  make: (provider: CountingProvider) => Pool<ArrayBuffer>,
  ops: readonly Op[],
  fifo: boolean,
  check?: (pool: Pool<ArrayBuffer>) => void,
  makeProvider: () => CountingProvider = () => new CountingProvider(),
): void {
  const provider = makeProvider();
  const pool = make(provider);
  const live: Live[] = [];
  let liveBytes = 0;
  for (const op of ops) {
    if (op.kind === 'reserve') {
      const alignment = 1 << op.alignLog2;
      const block = pool.reserve(op.size, alignment);
      if (block !== undefined) {
        expect(block.byteLength).toBe(op.size);
        expect(blockProblem(block, Math.max(alignment, 1))).toBeUndefined();
        live.push({ block, alignment });
        liveBytes += op.size;
      } else {
        expect(pool.stats.reservedBytes + op.size).toBeGreaterThan(0);
      }
    } else if (op.kind === 'release') {
      if (live.length === 0) continue;
      const index = fifo && op.pick % 3 !== 0 ? 0 : op.pick % live.length;
      const [gone] = live.splice(index, 1);
      pool.release((gone as Live).block);
      liveBytes -= (gone as Live).block.byteLength;
    } else {
      pool.trim();
    }
    const overlap = findOverlap(live.map((l) => l.block));
    expect(overlap).toBeUndefined();
    const stats = pool.stats;
    expect(stats.liveBytes).toBe(liveBytes);
    expect(stats.liveBlocks).toBe(live.length);
    expect(stats.reservedBytes).toBeLessThanOrEqual(stats.budget);
    expect(stats.peakLiveBytes).toBeGreaterThanOrEqual(stats.liveBytes);
    expect(stats.peakReservedBytes).toBeGreaterThanOrEqual(stats.reservedBytes);
    expect(provider.bytes).toBe(stats.reservedBytes);
    check?.(pool);
  }
  for (const l of live) pool.release(l.block);
  expect(pool.stats.liveBytes).toBe(0);
  check?.(pool);
  pool.trim();
  if (pool.kind !== 'passthrough') expect(pool.stats.reservedBytes).toBe(0);
  expect(provider.live.size).toBe(0);
  pool.destroy();
}

describe('pool properties (random interleavings of reserve and release)', () => {
  it(
    'TlsfPool: blocks never overlap, invariants hold, every byte returns',
    () => {
      fc.assert(
        fc.property(
          fc.array(opArb, { maxLength: 300, size: 'large' }),
          fc.integer({ min: 10, max: 16 }),
          fc.boolean(),
          (ops, slabLog2, budgeted) => {
            run(
              (provider) =>
                new TlsfPool(provider, {
                  slabSize: 1 << slabLog2,
                  budget: budgeted ? 3 << slabLog2 : undefined,
                }),
              ops,
              false,
              (pool) => (pool as TlsfPool<ArrayBuffer>).checkInvariants(),
            );
          },
        ),
        { numRuns: 150 },
      );
    },
    TIMEOUT_MS,
  );

  it(
    'TlsfPool over a resizable provider (two heaps, growth in place, shrinking trim): same properties',
    () => {
      fc.assert(
        fc.property(
          fc.array(opArb, { maxLength: 300, size: 'large' }),
          fc.integer({ min: 13, max: 18 }),
          fc.boolean(),
          (ops, maxLog2, budgeted) => {
            run(
              (provider) =>
                new TlsfPool(provider, { budget: budgeted ? 1 << 18 : undefined, growthGranule: 4096 }),
              ops,
              false,
              (pool) => (pool as TlsfPool<ArrayBuffer>).checkInvariants(),
              () => new ResizableCountingProvider(1 << maxLog2),
            );
          },
        ),
        { numRuns: 120 },
      );
    },
    TIMEOUT_MS,
  );

  it(
    'RingPool: blocks never overlap in mostly-FIFO use, and everything comes back',
    () => {
      fc.assert(
        fc.property(
          fc.array(opArb, { maxLength: 300, size: 'large' }),
          fc.integer({ min: 10, max: 17 }),
          (ops, capLog2) => {
            run((provider) => new RingPool(provider, { capacity: 1 << capLog2 }), ops, true);
          },
        ),
        { numRuns: 150 },
      );
    },
    TIMEOUT_MS,
  );

  it(
    'PassthroughPool: one slab per live block',
    () => {
      fc.assert(
        fc.property(fc.array(opArb, { maxLength: 150, size: 'large' }), (ops) => {
          run(
            (provider) => new PassthroughPool(provider, { budget: 100_000 }),
            ops,
            false,
            (pool) => {
              expect(pool.stats.slabCount).toBe(pool.stats.liveBlocks);
            },
          );
        }),
        { numRuns: 60 },
      );
    },
    TIMEOUT_MS,
  );
});
