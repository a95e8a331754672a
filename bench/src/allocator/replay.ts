/** Replays traces through Keel pools and the baselines, measuring peak reserved bytes. */
import type { Block, Pool, SlabProvider } from '@keel/allocator';
import type { BaselinePool } from './baselines.ts';
import type { Trace } from './traces.ts';

/** A provider that hands out no memory at all, for measuring a pool's bookkeeping on a trace. */
export class VirtualSlabProvider implements SlabProvider<{ readonly byteLength: number }> {
  createSlab(byteLength: number): { readonly byteLength: number } {
    return { byteLength };
  }
  destroySlab(): void {}
}

export interface ReplayResult {
  readonly peakReservedBytes: number;
  readonly peakLiveBytes: number;
  readonly ratio: number;
}

/** Replays a trace through a pool (every alloc must succeed: the pool's budget is unlimited). */
export function replayPool<M>(trace: Trace, pool: Pool<M>): ReplayResult {
  const blocks: (Block<M> | undefined)[] = [];
  for (const event of trace.events) {
    if (event.op === 'alloc') {
      const block = pool.reserve(event.size);
      if (block === undefined)
        throw new Error(`${pool.kind} pool: trace alloc of ${event.size} bytes failed`);
      blocks[event.id] = block;
    } else {
      pool.release(blocks[event.id] as Block<M>);
      blocks[event.id] = undefined;
    }
  }
  const stats = pool.stats;
  return {
    peakReservedBytes: stats.peakReservedBytes,
    peakLiveBytes: stats.peakLiveBytes,
    ratio: stats.peakReservedBytes / trace.peakLiveBytes,
  };
}

export function replayBaseline(trace: Trace, pool: BaselinePool): ReplayResult {
  const handles: number[] = [];
  for (const event of trace.events) {
    if (event.op === 'alloc') handles[event.id] = pool.alloc(event.size);
    else pool.free(handles[event.id] as number);
  }
  return {
    peakReservedBytes: pool.peakReservedBytes,
    peakLiveBytes: trace.peakLiveBytes,
    ratio: pool.peakReservedBytes / trace.peakLiveBytes,
  };
}
