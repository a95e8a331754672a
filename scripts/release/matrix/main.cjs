// The matrix consumer's CommonJS program: `require()` on Node 20 (no --experimental-require-module)
// loads every public package's CommonJS build. The CPU device runs in task mode (its worker script and
// kernels still load by URL from the installed dist), a SharedTimelineSemaphore is signalled from a
// worker thread that also require()s @keel/fence, and KeelError.is recognises an error of the ESM copy.
const { Worker } = require('node:worker_threads');
const { createCommandBuffer } = require('@keel/command-buffer');
const { QueueAllocator } = require('@keel/allocator');
const { createCpuDevice } = require('@keel/device-cpu');
const { createWebGpuDevice } = require('@keel/device-webgpu');
const { Fence, KeelError, SharedTimelineSemaphore, TimelineSemaphore } = require('@keel/fence');
const { BufferUsage, QueueAffinity } = require('@keel/hal');
const { Scheduler } = require('@keel/scheduler');
const { Tensor } = require('@keel/tensor-residency');
const keel = require('keel');
const mlp = require('@keel/mlp');

async function main() {
  for (const fn of [
    createCommandBuffer,
    QueueAllocator,
    createWebGpuDevice,
    Scheduler,
    Tensor,
    keel.createDevice,
    mlp.trainMlp,
    mlp.mlpCpuExecutableSource,
  ]) {
    if (typeof fn !== 'function') throw new Error(`require(): an export is ${typeof fn}`);
  }
  const device = await createCpuDevice({ mode: 'task' });
  const buffer = device.createBuffer({ usage: BufferUsage.DEFAULT, byteLength: 16 });
  const semaphore = new TimelineSemaphore(0);
  const out = new Uint32Array(4);
  device.queueFill(
    QueueAffinity.ANY,
    Fence.empty,
    Fence.of({ semaphore, value: 1 }),
    { buffer },
    0xc0ffee,
    4,
  );
  const read = Fence.of({ semaphore, value: 2 });
  device.queueRead(QueueAffinity.ANY, Fence.of({ semaphore, value: 1 }), read, { buffer }, out);
  await read.wait({ timeoutMs: 10000 });
  await device.destroy();
  if (out.some((v) => v !== 0xc0ffee)) throw new Error(`fill/read: got ${Array.from(out)}`);

  const shared = new SharedTimelineSemaphore(0);
  const worker = new Worker(
    `const { SharedTimelineSemaphore } = require('@keel/fence');
     const { workerData } = require('node:worker_threads');
     SharedTimelineSemaphore.fromHandle(workerData).signal(7);`,
    { eval: true, workerData: shared.handle },
  );
  await shared.wait(7, { timeoutMs: 10000 });
  await worker.terminate();

  const esm = await import('@keel/fence');
  if (esm.KeelError === KeelError) throw new Error('require() and import returned the same copy');
  if (!esm.KeelError.is(new KeelError('INTERNAL', 'from the CommonJS copy'), 'INTERNAL')) {
    throw new Error('KeelError.is does not recognise the other copy');
  }
  console.log(
    `cjs: task-mode fill/read ok, fence signalled from a worker (${shared.value}), KeelError.is across copies ok`,
  );
}
main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
