/**
 * 'scheduler': what the affinity-aware scheduler buys and costs.
 * - two_queue_speedup: two independent chains of matmul dispatches on a CPU device with 2 queues × 1
 *   worker, placed by the scheduler with free masks, vs the same chains on 1 queue × 1 worker
 *   (interleaved samples, medians);
 * - locality: share of operations placed on their producer's target when the mask allowed it;
 * - overhead_us_per_op: scheduler submit time minus direct device submit time, per operation.
 */
import { createCpuDevice } from '@keel/device-cpu';
import { Scheduler, targetsOf } from '@keel/scheduler';
import { interleavedMs, median, metric, type Suite } from '../harness.ts';
import { createChainBuffers, runChains } from '../scheduler/chains.ts';
import { drain, prepareChain, submitDirect, submitScheduled } from '../scheduler/overhead.ts';

/** Matrix size and links per chain: tens of milliseconds per link in JS on one core. */
const N = 256;
const CHAIN_LENGTH = 8;
const OVERHEAD_OPS = 2000;
const OVERHEAD_SAMPLES = 41;
const OVERHEAD_WARMUP = 5;

export const schedulerSuite: Suite = {
  name: 'scheduler',
  description: 'affinity-aware placement: two-queue speedup, locality, overhead per operation',
  async run({ log }) {
    const one = createCpuDevice({ mode: 'task', queues: 1, workersPerQueue: 1, label: 'cpu-1q' });
    const two = createCpuDevice({ mode: 'task', queues: 2, workersPerQueue: 1, label: 'cpu-2q' });
    try {
      const oneScheduler = new Scheduler(targetsOf(one));
      const twoScheduler = new Scheduler(targetsOf(two), { trace: 4 * CHAIN_LENGTH });
      const oneBuffers = await createChainBuffers(one, 2, N);
      const twoBuffers = await createChainBuffers(two, 2, N);

      log(`two chains × ${CHAIN_LENGTH} matmuls (${N}×${N} f32): 1 queue vs 2 queues, 1 worker each`);
      const times = await interleavedMs(
        {
          oneQueue: () => runChains(oneScheduler, oneBuffers, CHAIN_LENGTH),
          twoQueues: () => runChains(twoScheduler, twoBuffers, CHAIN_LENGTH),
        },
        { samples: 9, warmup: 2 },
      );
      const perChain = new Set(twoScheduler.trace().map((r) => `${r.target}`));
      log(
        `1 queue ${times.oneQueue.toFixed(1)} ms, 2 queues ${times.twoQueues.toFixed(1)} ms; targets used ${[...perChain].join(',')}`,
      );
      const locality = twoScheduler.stats().locality;

      log(`overhead: ${OVERHEAD_OPS} chained barriers, scheduler vs direct`);
      const overheadScheduler = new Scheduler(targetsOf(two));
      const direct: number[] = [];
      const scheduled: number[] = [];
      const added: number[] = [];
      for (let sample = 0; sample < OVERHEAD_WARMUP + OVERHEAD_SAMPLES; sample++) {
        const a = prepareChain(two, OVERHEAD_OPS);
        const b = prepareChain(two, OVERHEAD_OPS);
        // Alternate which variant goes first, so that neither always runs on a warmer heap.
        let d: number;
        let t: number;
        if (sample % 2 === 0) {
          d = submitDirect(two, a);
          t = submitScheduled(overheadScheduler, b);
        } else {
          t = submitScheduled(overheadScheduler, b);
          d = submitDirect(two, a);
        }
        await drain(a);
        await drain(b);
        if (sample >= OVERHEAD_WARMUP) {
          direct.push((d * 1000) / OVERHEAD_OPS);
          scheduled.push((t * 1000) / OVERHEAD_OPS);
          added.push(((t - d) * 1000) / OVERHEAD_OPS);
        }
      }
      const directUs = median(direct);
      const scheduledUs = median(scheduled);
      // The median of paired differences: robust to load drifting between samples.
      const overheadUs = median(added);
      log(
        `direct ${directUs.toFixed(3)} µs/op, scheduler ${scheduledUs.toFixed(3)} µs/op, added ${overheadUs.toFixed(3)} µs/op`,
      );

      return {
        two_queue_speedup: metric(times.oneQueue / times.twoQueues, 'x'),
        one_queue_ms: metric(times.oneQueue, 'ms'),
        two_queue_ms: metric(times.twoQueues, 'ms'),
        locality: metric(locality.share, 'ratio'),
        locality_eligible_ops: metric(locality.eligible, 'ops'),
        overhead_us_per_op: metric(overheadUs, 'µs'),
        direct_submit_us_per_op: metric(directUs, 'µs'),
        scheduler_submit_us_per_op: metric(scheduledUs, 'µs'),
      };
    } finally {
      await one.destroy();
      await two.destroy();
    }
  },
};
