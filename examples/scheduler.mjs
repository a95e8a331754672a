// A scheduler over two devices: one front for the queues of two CPU devices. Work follows its data
// (an operation goes where its wait fence was produced), explicit masks are obeyed, buffers pin an
// operation to their device, and copyAcrossDevices moves bytes between devices through the host.
import { createCpuDevice } from '@keel/device-cpu';
import { Fence, TimelineSemaphore } from '@keel/fence';
import { BufferUsage } from '@keel/hal';
import { copyAcrossDevices, Scheduler, targetsOf } from '@keel/scheduler';

const a = createCpuDevice({ mode: 'sync', queues: 2, label: 'cpu-a' });
const b = createCpuDevice({ mode: 'sync', queues: 1, label: 'cpu-b' });
try {
  const scheduler = new Scheduler(targetsOf(a, b), { trace: true }); // targets 0, 1 = cpu-a's queues; 2 = cpu-b
  const usage = BufferUsage.DEFAULT;
  const chain = new TimelineSemaphore(0, { label: 'chain' });
  const at = (value) => Fence.of({ semaphore: chain, value });
  const other = new TimelineSemaphore(0, { label: 'other' });

  // Nothing runs before everything is issued: the first operation waits for `go`.
  const go = new TimelineSemaphore(0, { label: 'go' });
  const x = scheduler.submit(
    { kind: 'alloca', params: { usage }, size: 4096 },
    { affinity: 0b010, wait: Fence.of({ semaphore: go, value: 1 }), signalFence: at(1) }, // explicit: cpu-a queue 1
  );
  scheduler.submit(
    { kind: 'fill', target: { buffer: x }, pattern: 7, patternLength: 4 },
    { wait: at(1), signalFence: at(2) },
  );
  const y = scheduler.submit(
    { kind: 'alloca', params: { usage }, size: 4096 },
    { affinity: 0b100, signalFence: Fence.of({ semaphore: other, value: 1 }) }, // explicit: cpu-b
  );
  const copy = copyAcrossDevices(
    scheduler,
    { buffer: x },
    { buffer: y },
    { wait: Fence.join(at(2), Fence.of({ semaphore: other, value: 1 })), signalFence: at(3) },
  );
  const out = new Uint32Array(1024);
  const readOn = scheduler.submit(
    { kind: 'read', source: { buffer: y }, target: out },
    { wait: at(3), signalFence: at(4) },
  );
  go.signal(1);
  await at(4).wait({ timeoutMs: 10_000 });

  if (!out.every((w) => w === 7)) throw new Error('cpu-b read back wrong bytes');
  const placements = scheduler.trace().map((r) => `${r.op}→${r.target} (${r.reason})`);
  const expected = [
    'alloca→1 (explicit)',
    'fill→1 (producer)', // either cpu-a queue may take it: it follows its data to queue 1
    'alloca→2 (explicit)',
    'read→1 (producer)', // copyAcrossDevices: read x on cpu-a into host staging ...
    'write→2 (explicit)', // ... then write it into y on cpu-b (its only target)
    'read→2 (explicit)', // only cpu-b holds y
  ];
  if (placements.join() !== expected.join() || copy.read !== 1 || copy.write !== 2 || readOn !== 2) {
    throw new Error(`unexpected placements: ${placements.join(', ')}`);
  }
  console.log(placements.join(', '));
} finally {
  await Promise.all([a.destroy(), b.destroy()]);
}
