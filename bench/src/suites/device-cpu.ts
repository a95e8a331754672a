/**
 * device-cpu: host cost of submitting reusable command buffers on the task-mode CPU device, and the
 * scaling of a real kernel over workers.
 *
 * Metrics:
 * - reusable_submit_us_{100,1000,10000}: host time of one `queueExecute` of a reusable command buffer
 *   of N empty-kernel dispatches (each binding slot 0), with a fresh one-entry binding table, after the
 *   first submission built and shipped its plan. Each timed call waits on nothing, so it validates the
 *   table, resolves it and posts to the worker inside the call; calls are timed in bursts behind an
 *   untimed 5 ms dispatch, so the worker is busy and no call pays for waking a thread. Target: the
 *   10 000 figure ≤ 2 × the 100 figure (reusable_submit_ratio_10000_vs_100).
 * - reusable_submit_idle_us_1000 (reference, no target): the same submission to an idle queue, waking
 *   the worker thread; on a loaded 2-core machine the wake-up may preempt the submitting thread.
 * - oneshot_submit_us_1000: record (create, begin, 1000 dispatches, end) + queueExecute of the same 1000
 *   dispatches as a one-shot command buffer. Target: oneshot_vs_reusable_1000 = oneshot / reusable ≥ 20.
 * - matmul_gflops_{1,2}, matmul_speedup_2: a 512×512×512 f32 matmul (bench/src/device-cpu/kernels.js:
 *   one workgroup per 32×128 output tile whose A and B panels stay in L2, 4×4 register blocks) on a
 *   device with 1 and with 2 workers; end-to-end time from queueExecute to the signal, rounds of the
 *   two devices interleaved, speedup = median of the paired ratios. Target: ≥ 1.6 on a 2-core machine.
 * - copy_16mib_{queue,cmd}_ms: a 16 MiB copy as a queue operation (runs on the main thread) and as a
 *   command-buffer copy (split into 256 KiB items over 2 workers): the data behind the transfer
 *   placement decision in the package README.
 *
 * Submissions are timed in bursts on a busy queue (see submitCosts); matmul and copy samples wait for
 * completion outside the timed region. Variants of one metric family are interleaved; figures are
 * medians.
 */

import { type CpuDevice, createCpuDevice } from '@keel/device-cpu';
import { Fence, type Semaphore } from '@keel/fence';
import { type Buffer, BufferUsage, type CommandBuffer, type Executable } from '@keel/hal';
import { median, metric, type Suite } from '../harness.ts';

const KERNELS = new URL('../device-cpu/kernels.js', import.meta.url);
const SIZES = [100, 1000, 10_000] as const;
const ROUNDS = 9;
const BURST = 8;
const ONESHOT_BURST = 2;
const BLOCKER_MS = 5;
const IDLE_SAMPLES = 41;
const MATMUL = 512;
const MATMUL_ROUNDS = 15;
const TILE_M = 32;
const TILE_N = 128;

/** One semaphore timeline per device for the suite's own ordering. */
class Timeline {
  value = 0;
  constructor(readonly semaphore: Semaphore) {}
  /** The fence of the current value (everything submitted so far). */
  get now(): Fence {
    return Fence.of({ semaphore: this.semaphore, value: this.value });
  }
  /** The fence of the next value. */
  next(): Fence {
    this.value++;
    return Fence.of({ semaphore: this.semaphore, value: this.value });
  }
  wait(): Promise<void> {
    return this.semaphore.wait(this.value, { timeoutMs: 120_000 });
  }
}

function emptyDispatches(
  device: CpuDevice,
  exe: Executable,
  count: number,
  mode: 'reusable' | 'one-shot',
): CommandBuffer {
  const cb = device.createCommandBuffer({ mode, bindingCapacity: 1 });
  cb.begin();
  const config = { workgroupCount: [1, 1, 1] as const, bindings: [{ slot: 0 }] };
  for (let i = 0; i < count; i++) cb.dispatch(exe, 0, config);
  cb.end();
  return cb;
}

async function submitCosts(log: (line: string) => void): Promise<Record<string, number>> {
  const device = createCpuDevice({ mode: 'task', queues: 1, workersPerQueue: 1 });
  try {
    const exe = await device.createExecutable({
      format: 'js-module',
      url: KERNELS,
      exports: [
        { name: 'empty', bindingCount: 1, constantCount: 0 },
        { name: 'busy', bindingCount: 0, constantCount: 1 },
      ],
    });
    const buffer = device.createBuffer({ byteLength: 256, usage: BufferUsage.DEFAULT });
    const t = new Timeline(device.createSemaphore(0));
    const reusable = new Map<number, CommandBuffer>();
    for (const n of SIZES) {
      const cb = emptyDispatches(device, exe, n, 'reusable');
      // The first submission builds the plan and ships it to the workers (not measured).
      device.queueExecute(1, t.now, t.next(), [cb], [[{ buffer }]]);
      await t.wait();
      reusable.set(n, cb);
    }
    const samples: Record<string, number[]> = { oneshot_1000: [] };
    for (const n of SIZES) samples[`reusable_${n}`] = [];
    // Bursts behind a blocker: an untimed dispatch that keeps the worker busy for a few ms comes first,
    // so every timed submission finds the worker running (the steady state of a pipelined queue) and
    // none pays for waking an idle thread (on a loaded 2-core machine that wake-up can preempt this
    // thread for the whole execution, which would measure the machine, not the device).
    const blocker = device.createCommandBuffer({ mode: 'reusable' });
    blocker.begin();
    blocker.dispatch(exe, 'busy', { workgroupCount: [1, 1, 1], constants: [BLOCKER_MS], bindings: [] });
    blocker.end();
    // Timed submissions wait on nothing (so each one is posted to the worker inside the call) and each
    // signals its own semaphore, made before timing.
    const signals = Array.from({ length: BURST }, () => device.createSemaphore(0));
    let value = 0;
    const burstEnd = (count: number) =>
      Fence.of(...signals.slice(0, count).map((semaphore) => ({ semaphore, value })));
    for (let round = 0; round < ROUNDS; round++) {
      for (const n of SIZES) {
        const cb = reusable.get(n)!;
        value++;
        device.queueExecute(1, Fence.empty, Fence.empty, [blocker]);
        for (let i = 0; i < BURST; i++) {
          const table = [{ buffer }];
          const signal = Fence.of({ semaphore: signals[i]!, value });
          const start = performance.now();
          device.queueExecute(1, Fence.empty, signal, [cb], [table]);
          const elapsed = performance.now() - start;
          if (round > 0) samples[`reusable_${n}`]!.push(elapsed * 1000);
        }
        await burstEnd(BURST).wait({ timeoutMs: 120_000 });
      }
      value++;
      device.queueExecute(1, Fence.empty, Fence.empty, [blocker]);
      for (let i = 0; i < ONESHOT_BURST; i++) {
        const signal = Fence.of({ semaphore: signals[i]!, value });
        const start = performance.now();
        const cb = emptyDispatches(device, exe, 1000, 'one-shot');
        device.queueExecute(1, Fence.empty, signal, [cb], [[{ buffer }]]);
        const elapsed = performance.now() - start;
        if (round > 0) samples.oneshot_1000!.push(elapsed * 1000);
      }
      await burstEnd(ONESHOT_BURST).wait({ timeoutMs: 120_000 });
    }
    // For reference: submissions to an idle queue (each one waits for the previous to complete), which
    // include waking the worker thread; noisy on a loaded machine.
    samples.idle_1000 = [];
    for (let i = 0; i < IDLE_SAMPLES + 3; i++) {
      const table = [{ buffer }];
      const wait = t.now;
      const signal = t.next();
      const start = performance.now();
      device.queueExecute(1, wait, signal, [reusable.get(1000)!], [table]);
      const elapsed = performance.now() - start;
      await t.wait();
      if (i >= 3) samples.idle_1000.push(elapsed * 1000);
    }
    const out: Record<string, number> = {};
    for (const [k, v] of Object.entries(samples)) out[k] = median(v);
    log(
      `submit µs: reusable ${SIZES.map((n) => `${n}: ${out[`reusable_${n}`]!.toFixed(1)}`).join(', ')}; idle queue 1000: ${out.idle_1000!.toFixed(1)}; one-shot 1000: ${out.oneshot_1000!.toFixed(1)}`,
    );
    return out;
  } finally {
    await device.destroy();
  }
}

interface MatmulRig {
  readonly device: CpuDevice;
  readonly cb: CommandBuffer;
  readonly timeline: Timeline;
  readonly c: Buffer;
}

async function matmulRig(workers: number, a: Float32Array, b: Float32Array): Promise<MatmulRig> {
  const device = createCpuDevice({ mode: 'task', queues: 1, workersPerQueue: workers });
  const exe = await device.createExecutable({
    format: 'js-module',
    url: KERNELS,
    exports: [{ name: 'matmul', bindingCount: 3, constantCount: 3 }],
  });
  const bytes = MATMUL * MATMUL * 4;
  const bufA = device.createBuffer({ byteLength: bytes, usage: BufferUsage.DEFAULT });
  const bufB = device.createBuffer({ byteLength: bytes, usage: BufferUsage.DEFAULT });
  const c = device.createBuffer({ byteLength: bytes, usage: BufferUsage.DEFAULT });
  const timeline = new Timeline(device.createSemaphore(0));
  device.queueWrite(1, timeline.now, timeline.next(), a, { buffer: bufA });
  device.queueWrite(1, timeline.now, timeline.next(), b, { buffer: bufB });
  const cb = device.createCommandBuffer({ mode: 'reusable' });
  cb.begin();
  cb.dispatch(exe, 'matmul', {
    workgroupCount: [Math.ceil(MATMUL / TILE_N), Math.ceil(MATMUL / TILE_M), 1],
    constants: [MATMUL, MATMUL, MATMUL],
    bindings: [{ buffer: bufA }, { buffer: bufB }, { buffer: c }],
  });
  cb.end();
  // Warm up (JIT in every worker, plan shipped).
  for (let i = 0; i < 2; i++) device.queueExecute(1, timeline.now, timeline.next(), [cb]);
  await timeline.wait();
  return { device, cb, timeline, c };
}

async function runMatmul(rig: MatmulRig): Promise<number> {
  const start = performance.now();
  rig.device.queueExecute(1, rig.timeline.now, rig.timeline.next(), [rig.cb]);
  await rig.timeline.wait();
  return performance.now() - start;
}

async function checkMatmul(rig: MatmulRig, a: Float32Array, b: Float32Array): Promise<void> {
  const out = new Float32Array(MATMUL * MATMUL);
  rig.device.queueRead(1, rig.timeline.now, rig.timeline.next(), { buffer: rig.c }, out);
  await rig.timeline.wait();
  for (const [i, j] of [
    [0, 0],
    [17, 301],
    [511, 511],
  ] as const) {
    let ref = 0;
    for (let k = 0; k < MATMUL; k++) ref += a[i * MATMUL + k]! * b[k * MATMUL + j]!;
    if (Math.abs(out[i * MATMUL + j]! - ref) > 1e-3 * Math.max(1, Math.abs(ref))) {
      throw new Error(`matmul check failed at (${i}, ${j}): ${out[i * MATMUL + j]} vs ${ref}`);
    }
  }
}

async function matmulScaling(log: (line: string) => void): Promise<Record<string, number>> {
  const a = Float32Array.from({ length: MATMUL * MATMUL }, (_, i) => ((i * 7) % 13) - 6);
  const b = Float32Array.from({ length: MATMUL * MATMUL }, (_, i) => ((i * 5) % 11) - 5);
  const one = await matmulRig(1, a, b);
  const two = await matmulRig(2, a, b);
  try {
    await checkMatmul(one, a, b);
    await checkMatmul(two, a, b);
    const t1: number[] = [];
    const t2: number[] = [];
    for (let r = 0; r < MATMUL_ROUNDS; r++) {
      t1.push(await runMatmul(one));
      t2.push(await runMatmul(two));
    }
    const flops = 2 * MATMUL ** 3;
    const m1 = median(t1);
    const m2 = median(t2);
    log(`matmul ms: 1 worker ${m1.toFixed(1)} [${t1.map((t) => t.toFixed(0)).join(' ')}]`);
    log(`matmul ms: 2 workers ${m2.toFixed(1)} [${t2.map((t) => t.toFixed(0)).join(' ')}]`);
    // Speedup from paired rounds (same moment, same machine load), then the median.
    const paired = t1.map((v, i) => v / t2[i]!);
    return {
      gflops1: flops / (m1 / 1000) / 1e9,
      gflops2: flops / (m2 / 1000) / 1e9,
      speedup: median(paired),
    };
  } finally {
    await Promise.all([one.device.destroy(), two.device.destroy()]);
  }
}

async function copyPlacement(log: (line: string) => void): Promise<Record<string, number>> {
  const device = createCpuDevice({ mode: 'task', queues: 1, workersPerQueue: 2 });
  try {
    const bytes = 16 * 1024 * 1024;
    const src = device.createBuffer({ byteLength: bytes, usage: BufferUsage.DEFAULT });
    const dst = device.createBuffer({ byteLength: bytes, usage: BufferUsage.DEFAULT });
    const t = new Timeline(device.createSemaphore(0));
    const cb = device.createCommandBuffer({ mode: 'reusable' });
    cb.begin();
    cb.copy({ buffer: src }, { buffer: dst });
    cb.end();
    const queue: number[] = [];
    const cmd: number[] = [];
    for (let s = 0; s < 14; s++) {
      let start = performance.now();
      device.queueCopy(1, t.now, t.next(), { buffer: src }, { buffer: dst });
      await t.wait();
      if (s >= 3) queue.push(performance.now() - start);
      start = performance.now();
      device.queueExecute(1, t.now, t.next(), [cb]);
      await t.wait();
      if (s >= 3) cmd.push(performance.now() - start);
    }
    const out = { queue: median(queue), cmd: median(cmd) };
    log(
      `16 MiB copy ms: queueCopy (main thread) ${out.queue.toFixed(2)}, command buffer (2 workers) ${out.cmd.toFixed(2)}`,
    );
    return out;
  } finally {
    await device.destroy();
  }
}

export const deviceCpuSuite: Suite = {
  name: 'device-cpu',
  description: 'CPU device: reusable vs one-shot submission host cost, matmul scaling over workers',
  async run({ log }) {
    const submit = await submitCosts(log);
    const matmul = await matmulScaling(log);
    const copy = await copyPlacement(log);
    return {
      reusable_submit_us_100: metric(submit.reusable_100!, 'us'),
      reusable_submit_us_1000: metric(submit.reusable_1000!, 'us'),
      reusable_submit_us_10000: metric(submit.reusable_10000!, 'us'),
      reusable_submit_ratio_10000_vs_100: metric(submit.reusable_10000! / submit.reusable_100!, 'x'),
      reusable_submit_idle_us_1000: metric(submit.idle_1000!, 'us'),
      oneshot_submit_us_1000: metric(submit.oneshot_1000!, 'us'),
      oneshot_vs_reusable_1000: metric(submit.oneshot_1000! / submit.reusable_1000!, 'x'),
      matmul_gflops_1: metric(matmul.gflops1!, 'GFLOP/s'),
      matmul_gflops_2: metric(matmul.gflops2!, 'GFLOP/s'),
      matmul_speedup_2: metric(matmul.speedup!, 'x'),
      copy_16mib_queue_ms: metric(copy.queue!, 'ms'),
      copy_16mib_cmd_ms: metric(copy.cmd!, 'ms'),
    };
  },
};
