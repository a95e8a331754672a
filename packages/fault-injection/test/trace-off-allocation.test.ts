/**
 * DESIGN.md § Profiling and traces: traces are "off by default; zero allocation per submission when
 * off". Pinned as "a trace adds nothing when off": the heap bytes a warm reusable `queueExecute` (one
 * dispatch) allocates on the calling thread are the same on a device whose trace was started and
 * stopped as on a device that never traced, within a few bytes per submission. (Not an absolute zero:
 * the devices' own per-operation records are not all pooled yet.) The same loop while a trace records
 * shows that the measurement sees a trace's allocations.
 *
 * Measured: the young generation's used bytes (`v8.getHeapSpaceStatistics()`, new space) around a
 * synchronous loop of submissions, after `gc()` (the project runs with --expose-gc); a window in which
 * a garbage collection ran (a `gc` performance entry inside it) is measured again. Optimizing tiers are
 * off in this file's process (`--max-opt=1`, restored after): tier-ups part-way through would change
 * what the same code allocates (escape analysis) from one window to the next, while interpreted and
 * baseline code allocate the same bytes every time, so the figures repeat to a fraction of a byte.
 * Two devices of each backend, measured in alternation, compared by the median of paired differences.
 */
import { PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';
import { Fence, type Semaphore } from '@keel/fence';
import { BufferUsage, type CommandBuffer, type Device, QueueAffinity } from '@keel/hal';
import { afterAll, describe, expect, it } from 'vitest';
import { type Backend, backends, title } from './backends';
import { bounded, HANG_MS } from './helpers';

/**
 * cpu `sync` (the work, its completion and its trace entries all happen inside the call) and WebGPU
 * (encoding and submission happen inside the call). Not cpu `task`: there the work completes on
 * worker threads and reaches this thread later, outside a synchronous window.
 */
const measured = (await backends()).filter((b) => b.name !== 'cpu-task');

/** Submissions per measurement: a few hundred kB of young allocations, well inside one semi-space. */
const SUBMISSIONS = 200;
/** Paired measurements compared (after warm-up ones). */
const PAIRS = 7;
/** What "the same" allows, per submission: less than the smallest object (16 bytes). */
const TOLERANCE = 8;

v8.setFlagsFromString('--max-opt=1');
afterAll(() => v8.setFlagsFromString('--max-opt=999'));

const gcStarts: number[] = [];
const observer = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcStarts.push(entry.startTime);
});
observer.observe({ entryTypes: ['gc'] });
afterAll(() => observer.disconnect());

function youngBytes(): number {
  return v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_used_size ?? Number.NaN;
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1]!;
};

interface Rig {
  readonly device: Device;
  readonly commandBuffers: readonly CommandBuffer[];
  readonly semaphore: Semaphore;
  value: number;
}

/** A one-queue device with a recorded reusable command buffer of one `add_const` dispatch. */
async function rig(backend: Backend): Promise<Rig> {
  const device = await bounded(backend.create(1), 'create');
  const exe = await bounded(backend.addConst(device), 'createExecutable');
  const buffer = device.createBuffer({ byteLength: 256, usage: BufferUsage.DEFAULT });
  const cb = device.createCommandBuffer({ mode: 'reusable' });
  cb.begin();
  cb.dispatch(exe, 'add_const', { workload: [64], constants: [1, 64], bindings: [{ buffer }] });
  cb.end();
  return { device, commandBuffers: [cb], semaphore: device.createSemaphore(0), value: 0 };
}

/**
 * Young-generation bytes per submission of `n` warm submissions on the calling thread (the fences
 * are made before the window), in a window no garbage collection ran in; waits for them afterwards.
 */
async function bytesPerSubmission(r: Rig, n = SUBMISSIONS): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  expect(gc, 'global.gc (the project runs with --expose-gc)').toBeTypeOf('function');
  const q = QueueAffinity.of(0);
  for (let attempt = 0; attempt < 10; attempt++) {
    const fences = Array.from({ length: n }, (_, i) =>
      Fence.of({ semaphore: r.semaphore, value: r.value + i + 1 }),
    );
    gc!();
    gc!();
    await new Promise((resolve) => setImmediate(resolve));
    const t0 = performance.now();
    const before = youngBytes();
    for (let i = 0; i < n; i++) r.device.queueExecute(q, Fence.empty, fences[i]!, r.commandBuffers);
    const after = youngBytes();
    const t1 = performance.now();
    r.value += n;
    await r.semaphore.wait(r.value, { timeoutMs: HANG_MS });
    await new Promise((resolve) => setTimeout(resolve, 1)); // gc entries arrive asynchronously
    if (after >= before && !gcStarts.some((t) => t >= t0 && t <= t1)) return (after - before) / n;
  }
  throw new Error('a garbage collection ran inside each of 10 measurement windows');
}

describe.each(measured)('trace off allocates nothing on $name', (backend) => {
  it.skipIf(!backend.available)(
    `${title(backend)}: a stopped trace adds no allocation per warm submission`,
    async () => {
      const never = await rig(backend);
      const stopped = await rig(backend);
      try {
        expect(stopped.device.startTrace, 'the device records traces').toBeTypeOf('function');
        // A trace records a few submissions, then stops.
        const trace = stopped.device.startTrace!();
        await bytesPerSubmission(stopped, 10);
        trace.stop();
        for (let i = 0; i < 3; i++) {
          await bytesPerSubmission(never);
          await bytesPerSubmission(stopped);
        }
        const baseline: number[] = [];
        const extra: number[] = [];
        for (let i = 0; i < PAIRS; i++) {
          const a = await bytesPerSubmission(never);
          const b = await bytesPerSubmission(stopped);
          baseline.push(a);
          extra.push(b - a);
        }
        const base = median(baseline);
        const added = median(extra);
        const figures = `never traced ${base.toFixed(1)} B/submission, after a stopped trace ${added >= 0 ? '+' : ''}${added.toFixed(1)} B (pairs: ${extra.map((x) => x.toFixed(0)).join(', ')})`;
        expect(Math.abs(added), figures).toBeLessThanOrEqual(TOLERANCE);
        // The measurement sees what a recording trace allocates (its events).
        const recording = stopped.device.startTrace!();
        const traced = median([await bytesPerSubmission(stopped), await bytesPerSubmission(stopped)]);
        recording.stop();
        expect(traced - base, `${figures}; while tracing ${traced.toFixed(1)} B`).toBeGreaterThan(
          10 * TOLERANCE,
        );
      } finally {
        await bounded(never.device.destroy(), 'destroy');
        await bounded(stopped.device.destroy(), 'destroy');
      }
    },
  );
});
