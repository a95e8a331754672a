// Surviving a lost device: a manager mirrors its dirty device tensors to host memory every K uses,
// off the critical path. When the device is lost, a mirrored tensor reads its last mirrored bytes
// (and `recovery` says how many updates were lost), and `rehome` moves the tensors onto a new device.
import { createCpuDevice } from '@keel/device-cpu';
import { Fence } from '@keel/fence';
import { QueueAffinity } from '@keel/hal';
import { ResidencyManager, Tensor } from '@keel/tensor-residency';

const first = createCpuDevice({ mode: 'sync', queues: 2 });
const params = new ResidencyManager(first, { label: 'params' });
const mirror = params.mirror({ everyUses: 2, affinity: QueueAffinity.of(1) }); // reads on queue 1
const w = Tensor.fromHost('f32', [4], [0, 0, 0, 0], { label: 'w' });

// Five "training steps", each writing w on the device (a 'readwrite' lease, as a kernel would).
const timeline = first.createSemaphore(0);
for (let step = 1; step <= 5; step++) {
  const lease = params.acquire(w, 'readwrite');
  const done = Fence.of({ semaphore: timeline, value: step });
  first.queueWrite(QueueAffinity.of(0), lease.wait, done, new Float32Array(4).fill(step), lease.ref);
  lease.release(done);
  await done.wait();
  while (mirror.stats.inFlight > 0) await new Promise((r) => setTimeout(r, 1));
}

await first.destroy(); // the device is lost: w's only up-to-date copy (version 5) is gone
while (params.lostReason === undefined) await new Promise((r) => setTimeout(r, 1));

const second = createCpuDevice({ mode: 'sync', queues: 2 });
try {
  const next = params.rehome(second); // same options and mirror policy, tensors uploaded from the mirror
  const { mirroredVersion, lostUpdates } = w.recovery;
  const restored = Array.from(await w.toHost());
  if (lostUpdates !== 1) throw new Error(`expected 1 lost update, got ${lostUpdates}`);
  if (restored.join() !== '4,4,4,4') throw new Error(`restored ${restored}, expected the step-4 mirror`);
  console.log(`lost 1 update; w restored from the mirror of version ${mirroredVersion}: [${restored}]`);
  if (next.device !== second) throw new Error('the new manager is not on the new device');
} finally {
  mirror[Symbol.dispose]();
  await second.destroy();
}
