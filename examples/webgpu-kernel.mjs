// A WGSL kernel on the WebGPU device (Dawn in Node through the `webgpu` package; navigator.gpu in
// browsers): recorded once, replayed with a binding table, over a queue-ordered output buffer.
// Without a WebGPU adapter it prints one line saying why and exits 0, except under CI (exit 1).
import { createWebGpuDevice } from '@keel/device-webgpu';
import { ErrorCode, Fence, KeelError, TimelineSemaphore } from '@keel/fence';
import { BufferUsage, QueueAffinity, slotRef } from '@keel/hal';

let device;
try {
  device = await createWebGpuDevice();
} catch (error) {
  const ci = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';
  if (ci || !KeelError.is(error, ErrorCode.UNAVAILABLE)) throw error;
  console.log(`skipped: no WebGPU adapter: ${error.message.split('\n')[0]}`);
  process.exit(0);
}

try {
  const negate = await device.createExecutable({
    format: 'wgsl',
    code: /* wgsl */ `
      struct C { n: u32 }
      @group(0) @binding(0) var<storage, read> input: array<i32>;
      @group(0) @binding(1) var<storage, read_write> output: array<i32>;
      @group(1) @binding(0) var<uniform> c: C;
      @compute @workgroup_size(64)
      fn negate(@builtin(global_invocation_id) g: vec3<u32>) {
        if (g.x < c.n && g.x < arrayLength(&output)) { output[g.x] = -input[g.x]; }
      }`,
    exports: [{ name: 'negate', bindingCount: 2, constantCount: 1, workgroupSize: [64, 1, 1] }],
  });

  // Record once, submit with a binding table per submission.
  const cb = device.createCommandBuffer({ mode: 'reusable', bindingCapacity: 2 });
  cb.begin();
  cb.dispatch(negate, 'negate', { workload: [1024], constants: [1024], bindings: [slotRef(0), slotRef(1)] });
  cb.end();

  const q = QueueAffinity.of(0);
  const t = new TimelineSemaphore();
  const at = (value) => Fence.of({ semaphore: t, value });
  const input = device.createBuffer({ byteLength: 4096, usage: BufferUsage.DEFAULT });
  const output = device.queueAlloca(q, Fence.empty, at(1), { usage: BufferUsage.DEFAULT }, 4096);
  const values = Int32Array.from({ length: 1024 }, (_, i) => i * 3 - 7);
  device.queueWrite(q, at(1), at(2), values, { buffer: input, length: 4096 });
  device.queueExecute(q, at(2), at(3), [cb], [[{ buffer: input }, { buffer: output }]]);
  const result = new Int32Array(1024);
  device.queueRead(q, at(3), at(4), { buffer: output }, result);
  device.queueDealloca(q, at(4), at(5), output);
  await at(5).wait({ timeoutMs: 20_000 }); // all of it is submitted at once, as one batch: no round trips

  for (let i = 0; i < values.length; i++) {
    if (result[i] !== -values[i]) throw new Error(`output[${i}] = ${result[i]}, expected ${-values[i]}`);
  }
  console.log(`negated 1024 i32 on ${device.info.name}: output[1] = ${result[1]}`);
} finally {
  await device.destroy();
}
