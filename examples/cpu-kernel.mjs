// A custom CPU kernel, recorded once into a reusable command buffer and replayed with a different
// binding table per submission, in both modes of the CPU device (sync: inline; task: worker threads).
import { createCpuDevice } from '@keel/device-cpu';
import { Fence } from '@keel/fence';
import { BufferUsage, constants, QueueAffinity, slotRef } from '@keel/hal';

const n = 1000;
const a = 2.5;

for (const mode of ['sync', 'task']) {
  const device = createCpuDevice({ mode, queues: 1, workersPerQueue: 2 });
  try {
    const saxpy = await device.createExecutable({
      format: 'js-module',
      url: new URL('./kernels/saxpy.mjs', import.meta.url),
      exports: [{ name: 'saxpy', bindingCount: 2, constantCount: 2, workgroupSize: [64, 1, 1] }],
    });

    // Record once: slots 0 and 1 are filled in by a binding table at each submission.
    const cb = device.createCommandBuffer({ mode: 'reusable', bindingCapacity: 2, label: 'saxpy' });
    cb.begin();
    cb.dispatch(saxpy, 'saxpy', {
      workload: [n], // ceil(1000 / 64) = 16 workgroups
      constants: [constants.f32(a), constants.u32(n)],
      bindings: [slotRef(0), slotRef(1)],
    });
    cb.end();

    // Two independent problems, each with its own buffers: one binding table each.
    const problems = [0, 1].map((p) => ({
      xs: Float32Array.from({ length: n }, (_, i) => i + p),
      ys: Float32Array.from({ length: n }, (_, i) => 1000 * p - i),
      x: device.createBuffer({ byteLength: n * 4, usage: BufferUsage.DEFAULT }),
      y: device.createBuffer({ byteLength: n * 4, usage: BufferUsage.DEFAULT }),
      out: new Float32Array(n),
    }));

    const q = QueueAffinity.ANY;
    const timeline = device.createSemaphore(0);
    const at = (value) => Fence.of({ semaphore: timeline, value });
    let t = 0;
    for (const p of problems) {
      device.queueWrite(q, at(t), at(t + 1), p.xs, { buffer: p.x });
      device.queueWrite(q, at(t + 1), at(t + 2), p.ys, { buffer: p.y });
      // Replay the same recording twice on this table: y = a*x + (a*x + y).
      device.queueExecute(q, at(t + 2), at(t + 3), [cb], [[{ buffer: p.x }, { buffer: p.y }]]);
      device.queueExecute(q, at(t + 3), at(t + 4), [cb], [[{ buffer: p.x }, { buffer: p.y }]]);
      device.queueRead(q, at(t + 4), at(t + 5), { buffer: p.y }, p.out);
      t += 5;
    }
    await at(t).wait({ timeoutMs: 10_000 });

    for (const [index, p] of problems.entries()) {
      for (let i = 0; i < n; i++) {
        const expected = Math.fround(
          Math.fround(a * p.xs[i]) + Math.fround(Math.fround(a * p.xs[i]) + p.ys[i]),
        );
        if (p.out[i] !== expected) {
          throw new Error(`${mode} mode, problem ${index}: y[${i}] = ${p.out[i]}, expected ${expected}`);
        }
      }
    }
    console.log(
      `${mode}: 2 binding tables × 2 replays of 1 recorded dispatch, y[${n - 1}] = ${problems[1].out[n - 1]}`,
    );
  } finally {
    await device.destroy();
  }
}
