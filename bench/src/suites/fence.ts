/**
 * `pnpm bench fence`: the costs of @keel/fence's hot paths.
 *
 * - signal_resolve_per_s: in one thread, `wait(v + 1)`, `signal(v + 1)`, await the wait — the full
 *   promise path, waits created, queued, resolved and awaited per second.
 * - onreached_signal_per_s: the same with the promise-free `onReached` hook that devices chain with.
 * - join_us: `Fence.join` of two 8-timepoint fences sharing 4 semaphores.
 * - xthread_roundtrip_us vs postmessage_roundtrip_us: a ping-pong between the main thread and a worker,
 *   through two SharedTimelineSemaphores (worker: waitSync; main: the promise `wait`, woken by
 *   Atomics.waitAsync) vs through postMessage; interleaved in one run (a fresh worker per sample, only
 *   the measured one alive), medians.
 */
import { Worker } from 'node:worker_threads';
import { Fence, SharedTimelineSemaphore, TimelineSemaphore } from '@keel/fence';
import { median, metric, type Suite, sampleMs, sampleSyncMs } from '../harness.ts';

const LOCAL_ROUNDS = 20_000;
const XTHREAD_ROUNDS = 2_000;

function onceMessage(worker: Worker): Promise<unknown> {
  return new Promise((resolve) => worker.once('message', resolve));
}

const XTHREAD_SAMPLES = 25;
const XTHREAD_WARMUP = 2;

/**
 * µs per round trip of XTHREAD_ROUNDS ping-pongs between this thread and a fresh worker, after 200
 * untimed ones: through two SharedTimelineSemaphores (worker: waitSync; here: the promise `wait`,
 * woken by Atomics.waitAsync) or through postMessage. The worker is gone when it resolves.
 */
async function pingPongUs(mode: 'shared' | 'message'): Promise<number> {
  const ping = new SharedTimelineSemaphore(0, { label: 'ping' });
  const pong = new SharedTimelineSemaphore(0, { label: 'pong' });
  const worker = new Worker(new URL('./fence-worker.mjs', import.meta.url), {
    workerData: mode === 'shared' ? { mode, ping: ping.handle, pong: pong.handle } : { mode },
  });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  let round = 0;
  const rounds = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i++) {
      if (mode === 'shared') {
        round++;
        ping.signal(round);
        await pong.wait(round);
      } else {
        const reply = onceMessage(worker);
        worker.postMessage(i);
        await reply;
      }
    }
  };
  try {
    await rounds(200);
    const start = performance.now();
    await rounds(XTHREAD_ROUNDS);
    return ((performance.now() - start) * 1000) / XTHREAD_ROUNDS;
  } finally {
    if (mode === 'shared') ping.fail(new Error('bench done'));
    else worker.postMessage('stop');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 2000))]);
    await worker.terminate();
  }
}

export const fenceSuite: Suite = {
  name: 'fence',
  description:
    'timeline semaphores and fences: signal→resolve rate, join, cross-thread vs postMessage round trip',
  async run(ctx) {
    // In-thread signal + resolution through promises.
    const local = new TimelineSemaphore(0, { label: 'bench' });
    let v = 0;
    const promiseMs = await sampleMs(
      async () => {
        for (let i = 0; i < LOCAL_ROUNDS; i++) {
          const done = local.wait(v + 1);
          local.signal(++v);
          await done;
        }
      },
      { samples: 15, warmup: 3 },
    );
    const signalResolvePerS = LOCAL_ROUNDS / (promiseMs / 1000);
    ctx.log(`signal+resolve: ${Math.round(signalResolvePerS)} /s`);

    // The same through onReached (no promise).
    let reached = 0;
    const onReached = (): void => {
      reached++;
    };
    const hookMs = sampleSyncMs(
      () => {
        for (let i = 0; i < LOCAL_ROUNDS; i++) {
          local.onReached(v + 1, onReached);
          local.signal(++v);
        }
      },
      { samples: 15, warmup: 3 },
    );
    if (reached !== 18 * LOCAL_ROUNDS) throw new Error(`onReached ran ${reached} times`);
    const onReachedPerS = LOCAL_ROUNDS / (hookMs / 1000);
    ctx.log(`onReached+signal: ${Math.round(onReachedPerS)} /s`);

    // join of two 8-timepoint fences (4 semaphores in common, 12 distinct).
    const sems = Array.from({ length: 12 }, (_, i) => new TimelineSemaphore(0, { label: `j${i}` }));
    const f1 = Fence.of(...sems.slice(0, 8).map((semaphore, i) => ({ semaphore, value: i + 1 })));
    const f2 = Fence.of(...sems.slice(4, 12).map((semaphore, i) => ({ semaphore, value: 10 - i })));
    let sink = 0;
    const joinMs = sampleSyncMs(
      () => {
        sink += Fence.join(f1, f2).timepoints.length;
      },
      { samples: 15, inner: 20_000, warmup: 3 },
    );
    if (sink === 0) throw new Error('join produced nothing');
    ctx.log(`join: ${(joinMs * 1000).toFixed(3)} µs`);

    // Cross-thread ping-pong: shared semaphores vs postMessage, interleaved.
    // Each sample runs one ping-pong with only its own worker alive (a fresh worker per sample, the
    // variants interleaved): with two cores, an idle third thread changes where the OS places the two
    // that ping-pong, which alone moved either variant between ~6 and ~70 µs per round trip.
    const xthread: number[] = [];
    const postmessage: number[] = [];
    for (let sample = 0; sample < XTHREAD_WARMUP + XTHREAD_SAMPLES; sample++) {
      const shared = await pingPongUs('shared');
      const message = await pingPongUs('message');
      if (sample >= XTHREAD_WARMUP) {
        xthread.push(shared);
        postmessage.push(message);
      }
    }
    const xthreadUs = median(xthread);
    const postMessageUs = median(postmessage);
    ctx.log(`round trip: shared ${xthreadUs.toFixed(2)} µs, postMessage ${postMessageUs.toFixed(2)} µs`);
    return {
      signal_resolve_per_s: metric(signalResolvePerS, 'ops/s'),
      onreached_signal_per_s: metric(onReachedPerS, 'ops/s'),
      join_us: metric(joinMs * 1000, 'µs'),
      xthread_roundtrip_us: metric(xthreadUs, 'µs'),
      postmessage_roundtrip_us: metric(postMessageUs, 'µs'),
      postmessage_over_xthread: metric(postMessageUs / xthreadUs, 'x'),
    };
  },
};
