// Queue-ordered allocation across two queues: queue 0 allocates and fills a buffer, queue 1 reads it
// and releases it; the next allocation on queue 0 waits for that release through its fence, so the
// allocator hands back the same memory with no host wait and no growth (DESIGN.md § allocator, rule b).
// Every operation of every step is issued before anything runs (a `go` semaphore holds the first one);
// fences alone order them.
import { createCpuDevice } from '@keel/device-cpu';
import { Fence } from '@keel/fence';
import { BufferUsage, QueueAffinity } from '@keel/hal';

const device = createCpuDevice({ mode: 'task', queues: 2, workersPerQueue: 1 });
try {
  const q0 = QueueAffinity.of(0);
  const q1 = QueueAffinity.of(1);
  const t0 = device.createSemaphore(0); // queue 0's timeline
  const t1 = device.createSemaphore(0); // queue 1's timeline
  const on0 = (value) => Fence.of({ semaphore: t0, value });
  const on1 = (value) => Fence.of({ semaphore: t1, value });

  const steps = 4;
  const words = 16 * 1024; // 64 KiB per step
  const outputs = [];
  let v0 = 0;
  let v1 = 0;
  // Nothing may start before every step is issued: the first alloca waits for `go`.
  const go = device.createSemaphore(0);
  let wait0 = Fence.of({ semaphore: go, value: 1 });
  for (let k = 0; k < steps; k++) {
    // Queue 0: allocate (usable after on0(v0 + 1)), then fill with the step's pattern.
    const buffer = device.queueAlloca(q0, wait0, on0(++v0), { usage: BufferUsage.DEFAULT }, words * 4);
    device.queueFill(q0, on0(v0), on0(++v0), { buffer }, 0x1000 + k, 4);
    // Queue 1: read once queue 0 filled it, then release it (death frontier: the read).
    const out = new Uint32Array(words);
    outputs.push(out);
    device.queueRead(q1, Fence.join(on0(v0), on1(v1)), on1(++v1), { buffer }, out);
    device.queueDealloca(q1, on1(v1), on1(++v1), buffer);
    // The next step's alloca on queue 0 waits for queue 1's release: its wait dominates the frontier.
    wait0 = Fence.join(on0(v0), on1(v1));
  }
  go.signal(1);
  await Fence.join(on0(v0), on1(v1)).wait({ timeoutMs: 10_000 });

  for (const [k, out] of outputs.entries()) {
    if (!out.every((w) => w === 0x1000 + k)) throw new Error(`step ${k}: read back wrong words`);
  }
  let reused = 0;
  let growths = 0;
  for (const stats of device.allocatorStats().values()) {
    reused += stats.reuseDominated;
    growths += stats.growths;
  }
  // The first alloca grows the pool; each later one reuses the block its wait fence already orders.
  if (reused !== steps - 1) throw new Error(`expected ${steps - 1} dominated reuses, got ${reused}`);
  if (growths !== 1) throw new Error(`expected 1 growth, got ${growths}`);
  console.log(`${steps} steps across 2 queues: 1 growth, ${reused} reuses without waiting`);
} finally {
  await device.destroy();
}
