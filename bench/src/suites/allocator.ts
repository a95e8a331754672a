/**
 * allocator: the pools and the queue-ordered engine of @keel/allocator (seed 002).
 *
 * Pool core — reserve + release pairs per second, interleaved, medians: a window of 64 live blocks of
 * sizes log-uniform in 16 B … 64 KiB (a fixed pseudo-random sequence); each pair releases the oldest
 * block and reserves the next size (FIFO, so the ring can reuse). `tlsf_pairs_per_s` (target ≥ 2 000 000),
 * `ring_pairs_per_s`, `passthrough_pairs_per_s` (one ArrayBuffer per block, the baseline; sampled
 * apart from the others so its garbage does not land in their samples), and
 * `queue_alloca_dealloca_per_s`: alloca + dealloca pairs through the QueueAllocator over TLSF on one
 * queue (fences created per call, everything reached at once).
 *
 * Trace replay — peak reserved bytes / peak live bytes over two traces (bench/src/allocator/traces.ts):
 * four training steps of the reference MLP (784-512-512-10, batch 256, f32 activations, gradients and
 * temporaries with their real lifetimes, next batch uploaded one step ahead) and a randomized trace
 * (20 000 allocations, log-uniform 256 B … 2 MiB, random lifetimes). Each runs through:
 * - `tlsf`: TlsfPool with default options over a resizable ArrayBuffer provider (slabs grow in place:
 *   the CPU configuration, IREE's reserve-then-commit);
 * - `tlsf_fixed`: TlsfPool with default options over fixed slabs (4 MiB, the GPUBuffer configuration);
 * - `exact`: exact-size free lists (TensorFlow.js style); `bucket`: power-of-two buckets (ONNX Runtime
 *   Web style). Targets: `tlsf_mlp_peak_ratio` ≤ 1.15 and no higher than either baseline.
 */
import {
  ArrayBufferSlabProvider,
  type Block,
  PassthroughPool,
  type Pool,
  QueueAllocator,
  RingPool,
  TlsfPool,
} from '@keel/allocator';
import { Fence, TimelineSemaphore } from '@keel/fence';
import { ExactSizeFreeLists, PowerOfTwoBuckets } from '../allocator/baselines.ts';
import { type ReplayResult, replayBaseline, replayPool, VirtualSlabProvider } from '../allocator/replay.ts';
import { mlpTrace, prng, randomTrace, type Trace } from '../allocator/traces.ts';
import { interleavedMs, type Metrics, metric, type Suite, sampleMs } from '../harness.ts';

const WINDOW = 64;
const SIZES = 4096;
const PAIRS = 200_000;
const PASSTHROUGH_PAIRS = 5_000;
const QUEUE_PAIRS = 50_000;

function sizeSequence(): Float64Array {
  const random = prng(2024);
  const sizes = new Float64Array(SIZES);
  const logMin = Math.log(16);
  const logMax = Math.log(64 * 1024);
  for (let i = 0; i < SIZES; i++) sizes[i] = Math.round(Math.exp(logMin + random() * (logMax - logMin)));
  return sizes;
}

/** WINDOW live blocks of `pool`, and the cursor into the size sequence. */
interface LoopState<M> {
  readonly live: Block<M>[];
  next: number;
  oldest: number;
}

function prefill<M>(pool: Pool<M>, sizes: Float64Array): LoopState<M> {
  const state: LoopState<M> = { live: [], next: 0, oldest: 0 };
  for (let i = 0; i < WINDOW; i++)
    state.live.push(reserveOrThrow(pool, sizes[state.next++ & (SIZES - 1)] as number));
  return state;
}

function reserveOrThrow<M>(pool: Pool<M>, size: number): Block<M> {
  const block = pool.reserve(size);
  if (block === undefined)
    throw new Error(`${pool.kind} pool: reserve of ${size} bytes failed in the pair loop`);
  return block;
}

// One loop per pool class, on purpose: closures of one function literal share their type feedback in
// V8, so a single generic loop would measure a polymorphic call site that no device has.

function tlsfLoop(pool: TlsfPool<ArrayBuffer>, sizes: Float64Array, pairs: number): () => void {
  const s = prefill(pool, sizes);
  return () => {
    for (let i = 0; i < pairs; i++) {
      pool.release(s.live[s.oldest] as Block<ArrayBuffer>);
      const block = pool.reserve(sizes[s.next++ & (SIZES - 1)] as number);
      if (block === undefined) throw new Error('tlsf pool: reserve failed in the pair loop');
      s.live[s.oldest] = block;
      s.oldest = (s.oldest + 1) & (WINDOW - 1);
    }
  };
}

function ringLoop(pool: RingPool<ArrayBuffer>, sizes: Float64Array, pairs: number): () => void {
  const s = prefill(pool, sizes);
  return () => {
    for (let i = 0; i < pairs; i++) {
      pool.release(s.live[s.oldest] as Block<ArrayBuffer>);
      const block = pool.reserve(sizes[s.next++ & (SIZES - 1)] as number);
      if (block === undefined) throw new Error('ring pool: reserve failed in the pair loop');
      s.live[s.oldest] = block;
      s.oldest = (s.oldest + 1) & (WINDOW - 1);
    }
  };
}

function passthroughLoop(pool: PassthroughPool<ArrayBuffer>, sizes: Float64Array, pairs: number): () => void {
  const s = prefill(pool, sizes);
  return () => {
    for (let i = 0; i < pairs; i++) {
      pool.release(s.live[s.oldest] as Block<ArrayBuffer>);
      const block = pool.reserve(sizes[s.next++ & (SIZES - 1)] as number);
      if (block === undefined) throw new Error('passthrough pool: reserve failed in the pair loop');
      s.live[s.oldest] = block;
      s.oldest = (s.oldest + 1) & (WINDOW - 1);
    }
  };
}

function queueLoop(pairs: number): () => void {
  const allocator = new QueueAllocator(new TlsfPool(new ArrayBufferSlabProvider()));
  const q = new TimelineSemaphore(0);
  let v = 0;
  let next = 0;
  const sizes = sizeSequence();
  return () => {
    for (let i = 0; i < pairs; i++) {
      const a = allocator.alloca(
        1,
        Fence.of({ semaphore: q, value: v }),
        Fence.of({ semaphore: q, value: v + 1 }),
        sizes[next++ & (SIZES - 1)] as number,
      );
      allocator.dealloca(
        1,
        Fence.of({ semaphore: q, value: v + 1 }),
        Fence.of({ semaphore: q, value: v + 2 }),
        a,
      );
      v += 2;
    }
  };
}

function replayAll(trace: Trace): Record<'tlsf' | 'tlsf_fixed' | 'exact' | 'bucket', ReplayResult> {
  return {
    tlsf: replayPool(trace, new TlsfPool(new ArrayBufferSlabProvider({ maxByteLength: 1 << 30 }))),
    tlsf_fixed: replayPool(trace, new TlsfPool(new VirtualSlabProvider())),
    exact: replayBaseline(trace, new ExactSizeFreeLists()),
    bucket: replayBaseline(trace, new PowerOfTwoBuckets()),
  };
}

export const allocatorSuite: Suite = {
  name: 'allocator',
  description:
    'pool reserve/release pairs per second; peak footprint on an MLP trace and a random trace vs TF.js/ORT-style pooling',
  async run({ log }): Promise<Metrics> {
    const metrics: Metrics = {};
    const sizes = sizeSequence();
    const tlsf = tlsfLoop(new TlsfPool(new ArrayBufferSlabProvider()), sizes, PAIRS);
    const ring = ringLoop(
      new RingPool(new ArrayBufferSlabProvider(), { capacity: 16 * 1024 * 1024 }),
      sizes,
      PAIRS,
    );
    const queue = queueLoop(QUEUE_PAIRS);
    log('pool core: reserve + release pairs, TLSF / ring / queue allocator interleaved');
    const ms = await interleavedMs({ tlsf, ring, queue }, { samples: 21, warmup: 5 });
    // Passthrough creates an ArrayBuffer per pair; sampled on its own so its garbage does not land
    // in the other pools' samples.
    log('pool core: passthrough');
    const passthrough = passthroughLoop(
      new PassthroughPool(new ArrayBufferSlabProvider()),
      sizes,
      PASSTHROUGH_PAIRS,
    );
    const passthroughMs = await sampleMs(passthrough, { samples: 11, warmup: 3 });
    metrics.tlsf_pairs_per_s = metric(PAIRS / (ms.tlsf / 1000), 'pairs/s');
    metrics.ring_pairs_per_s = metric(PAIRS / (ms.ring / 1000), 'pairs/s');
    metrics.passthrough_pairs_per_s = metric(PASSTHROUGH_PAIRS / (passthroughMs / 1000), 'pairs/s');
    metrics.queue_alloca_dealloca_per_s = metric(QUEUE_PAIRS / (ms.queue / 1000), 'pairs/s');

    for (const [name, trace] of [
      ['mlp', mlpTrace()],
      ['random', randomTrace()],
    ] as const) {
      log(
        `trace replay: ${trace.name} (${trace.events.length} events, peak live ${trace.peakLiveBytes} bytes)`,
      );
      const results = replayAll(trace);
      metrics[`${name}_peak_live_bytes`] = metric(trace.peakLiveBytes, 'bytes');
      for (const [pool, result] of Object.entries(results)) {
        if (result.peakLiveBytes !== trace.peakLiveBytes)
          throw new Error(`${pool}: live bytes disagree with the trace`);
        metrics[`${pool}_${name}_peak_ratio`] = metric(result.ratio, 'x');
      }
    }
    return metrics;
  },
};
