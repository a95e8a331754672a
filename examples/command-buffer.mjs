// Command buffers: record once (fill, dispatch, barrier, copy, debug groups; slot refs and direct refs
// mixed), then submit many times with a binding table per submission. Submission is validated against
// what the recorded commands need from each slot, in O(slots), before anything is enqueued.
import { createCpuDevice } from '@keel/device-cpu';
import { ErrorCode, Fence, KeelError } from '@keel/fence';
import { BufferUsage, constants, QueueAffinity, slotRef } from '@keel/hal';

const n = 256;
const device = createCpuDevice({ mode: 'sync', queues: 1 });
try {
  const saxpy = await device.createExecutable({
    format: 'js-module',
    url: new URL('./kernels/saxpy.mjs', import.meta.url), // y = a * x + y
    exports: [{ name: 'saxpy', bindingCount: 2, constantCount: 2, workgroupSize: [64, 1, 1] }],
  });
  const usage = BufferUsage.DEFAULT;
  const history = device.createBuffer({ byteLength: 4 * n * 4, usage, label: 'history' }); // direct ref

  // Slot 0: the input x; slot 1: scratch y (n floats); slot 2: where in `history` this step's result goes.
  const step = device.createCommandBuffer({ mode: 'reusable', bindingCapacity: 3, label: 'step' });
  step.begin();
  step.beginDebugGroup('scale');
  step.fill(slotRef(1), 0, 4); // zero the whole scratch slot, whatever buffer it gets
  step.barrier();
  step.dispatch(saxpy, 'saxpy', {
    workload: [n], // export.workgroupCount(workload) runs now, at record time
    constants: [constants.f32(3), constants.u32(n)],
    bindings: [slotRef(0), slotRef(1)],
  });
  step.barrier();
  step.copy(slotRef(1, 0, n * 4), slotRef(2, 0, n * 4)); // copy length fixed at record time
  step.endDebugGroup();
  step.end();

  const scratch = device.createBuffer({ byteLength: n * 4, usage, label: 'scratch' });
  const inputs = [1, 2, 3, 4].map((k) => {
    const x = device.createBuffer({ byteLength: n * 4, usage, label: `x${k}` });
    return { k, x, data: new Float32Array(n).fill(k) };
  });
  const timeline = device.createSemaphore(0);
  const at = (value) => Fence.of({ semaphore: timeline, value });
  const q = QueueAffinity.ANY;
  let v = 0;
  for (const { k, x, data } of inputs) {
    device.queueWrite(q, at(v), at(v + 1), data, { buffer: x });
    // Every step: a new table. Entry i substitutes slot i; its offset is added to every command's offset.
    const table = [{ buffer: x }, { buffer: scratch }, { buffer: history, offset: (k - 1) * n * 4 }];
    device.queueExecute(q, at(v + 1), at(v + 2), [step], [table]);
    v += 2;
  }
  const out = new Float32Array(4 * n);
  device.queueRead(q, at(v), at(v + 1), { buffer: history }, out);
  await at(v + 1).wait({ timeoutMs: 10_000 });
  for (let i = 0; i < out.length; i++) {
    const expected = 3 * (Math.floor(i / n) + 1);
    if (out[i] !== expected) throw new Error(`history[${i}] = ${out[i]}, expected ${expected}`);
  }

  // A table too short for the slots the commands use is refused at submission, before anything runs.
  let refused;
  try {
    device.queueExecute(q, at(v + 1), at(v + 2), [step], [[{ buffer: inputs[0].x }]]);
  } catch (error) {
    refused = error;
  }
  if (!KeelError.is(refused, ErrorCode.INVALID_ARGUMENT))
    throw new Error('a short binding table must be refused');
  console.log(`1 recording, ${inputs.length} submissions; refused: ${refused.message}`);
} finally {
  await device.destroy();
}
