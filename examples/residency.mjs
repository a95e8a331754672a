// Residency with a budget: four 64 KiB tensors, a device budget that holds three. Each round updates
// every tensor on the device in place; to make room the manager evicts the least recently used copy,
// writing it back to the host first because the device changed it. Transfers are lazy: a tensor is
// uploaded only when its device copy is missing or stale, and read back only when the host asks.
import { createCpuDevice } from '@keel/device-cpu';
import { Fence } from '@keel/fence';
import { constants, QueueAffinity, slotRef } from '@keel/hal';
import { ensureOnHost, ResidencyManager, Tensor } from '@keel/tensor-residency';

const elements = 16 * 1024; // 64 KiB of f32 per tensor
const device = createCpuDevice({ mode: 'sync', queues: 1 });
try {
  const residency = new ResidencyManager(device, { budgetBytes: 3 * elements * 4 });
  const addScalar = await device.createExecutable({
    format: 'js-module',
    url: new URL('./kernels/add-scalar.mjs', import.meta.url),
    exports: [{ name: 'addScalar', bindingCount: 1, constantCount: 1, workgroupSize: [1024, 1, 1] }],
  });
  const step = device.createCommandBuffer({ mode: 'reusable', bindingCapacity: 1 });
  step.begin();
  step.dispatch(addScalar, 'addScalar', {
    workload: [elements],
    constants: [constants.f32(0.5)],
    bindings: [slotRef(0)],
  });
  step.end();

  const tensors = [0, 1, 2, 3].map((t) =>
    Tensor.fromHost('f32', [elements], new Float32Array(elements).fill(t)),
  );
  const rounds = 2;
  for (let round = 0; round < rounds; round++) {
    for (const tensor of tensors) {
      const lease = residency.acquire(tensor, 'readwrite'); // uploads (or evicts to make room) if needed
      // The kernel's own fence: one timeline shared by kernels that no fence orders (each tensor's waits
      // on its own uploads and write-backs) could pass a value before the kernel signalling it is done.
      const done = Fence.of({ semaphore: device.createSemaphore(0), value: 1 });
      device.queueExecute(QueueAffinity.ANY, lease.wait, done, [step], [[lease.ref]]);
      lease.release(done); // our use of the device copy ends at `done`
    }
  }
  const host = await ensureOnHost(tensors); // reads back what is only up to date on the device

  for (const [t, data] of host.entries()) {
    const expected = t + 0.5 * rounds;
    if (!data.every((x) => x === expected))
      throw new Error(`tensor ${t}: expected every element ${expected}`);
  }
  const c = residency.counters;
  if (c.peakResidentBytes > c.budgetBytes) throw new Error(`peak ${c.peakResidentBytes} B over budget`);
  // 4 tensors through 3 slots, LRU: every acquire after the third evicts, and every evicted copy is dirty.
  const acquires = rounds * tensors.length;
  if (c.evictions !== acquires - 3) throw new Error(`expected ${acquires - 3} evictions, got ${c.evictions}`);
  if (c.writebacks !== c.evictions)
    throw new Error(`expected a write-back per eviction, got ${c.writebacks}`);
  console.log(
    `budget ${c.budgetBytes} B, peak ${c.peakResidentBytes} B: ${c.evictions} evictions, ${c.writebacks} write-backs, ` +
      `${c.hostToDeviceBytes} B up, ${c.deviceToHostBytes} B down`,
  );
  residency.dispose();
} finally {
  await device.destroy();
}
