// Code written against @keel/hal's Device contract runs on any Keel device. `axpy` below knows nothing
// about the CPU: it uses buffer usage bits, queue affinities, binding-table slots, dispatch constants
// (`constants`/`packConstants` give floats their bit patterns) and fences. Ordering comes only from
// fences; queue operations never block; argument errors throw KeelErrors at the call.
import { createCpuDevice } from '@keel/device-cpu';
import { ErrorCode, Fence, KeelError } from '@keel/fence';
import { BufferUsage, constants, packConstants, QueueAffinity, slotRef } from '@keel/hal';

/** y = a·x + y on `device`, with `executable` exporting `saxpy` (bindings x, y; constants a, n). */
async function axpy(device, executable, a, xs, ys) {
  const n = xs.length;
  const cb = device.createCommandBuffer({ mode: 'one-shot', bindingCapacity: 2 });
  cb.begin();
  cb.dispatch(executable, 'saxpy', {
    workload: [n],
    constants: packConstants([{ f32: a }, { u32: n }]),
    bindings: [slotRef(0), slotRef(1)],
  });
  cb.end();

  const usage = BufferUsage.TRANSFER | BufferUsage.DISPATCH_STORAGE;
  const x = device.createBuffer({ byteLength: n * 4, usage });
  const y = device.createBuffer({ byteLength: n * 4, usage });
  const queue = QueueAffinity.of(device.info.queueCount - 1); // the last queue
  const t = device.createSemaphore(0);
  const at = (value) => Fence.of({ semaphore: t, value });
  device.queueWrite(queue, Fence.empty, at(1), xs, { buffer: x });
  device.queueWrite(queue, at(1), at(2), ys, { buffer: y });
  device.queueExecute(queue, at(2), at(3), [cb], [[{ buffer: x }, { buffer: y }]]);
  const out = new Float32Array(n);
  device.queueRead(queue, at(3), at(4), { buffer: y }, out);
  await at(4).wait({ timeoutMs: 10_000 });
  x.destroy();
  y.destroy();
  return out;
}

const device = createCpuDevice({ mode: 'sync', queues: 2 });
try {
  const exe = await device.createExecutable({
    format: 'js-module',
    url: new URL('./kernels/saxpy.mjs', import.meta.url),
    exports: [{ name: 'saxpy', bindingCount: 2, constantCount: 2, workgroupSize: [64, 1, 1] }],
  });
  const out = await axpy(device, exe, 0.5, new Float32Array([2, 4, 6]), new Float32Array([1, 1, 1]));
  if (out.join() !== '2,3,4') throw new Error(`axpy gave ${out.join()}`);
  if (constants.f32(0.5) !== 0x3f000000) throw new Error('f32 bit pattern');

  // Bad input is a KeelError naming the object and the rule, thrown at the call: nothing was enqueued.
  let error;
  try {
    device.queueBarrier(QueueAffinity.of(5), Fence.empty, Fence.empty); // the device has queues 0 and 1
  } catch (e) {
    error = e;
  }
  if (!KeelError.is(error, ErrorCode.INVALID_ARGUMENT))
    throw new Error('affinity of queue 5 must be refused');
  console.log(`axpy = [${out.join(', ')}]; ${error.message}`);
} finally {
  await device.destroy();
}
