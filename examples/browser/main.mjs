// The browser example's module: a WGSL kernel on the WebGPU device (navigator.gpu), ordered by fences,
// checked against the expected output. Reports { status: 'ok' | 'skipped' | 'failed', message } in
// window.keelExample and #result. (The CPU device does not bundle for browsers yet, so this page uses
// WebGPU only.)
import { createWebGpuDevice } from '@keel/device-webgpu';
import { Fence, TimelineSemaphore } from '@keel/fence';
import { BufferUsage, constants, QueueAffinity, slotRef } from '@keel/hal';

function report(status, message) {
  window.keelExample = { status, message };
  document.getElementById('result').textContent = `${status}: ${message}`;
}

async function run() {
  if (!navigator.gpu) return report('skipped', 'no navigator.gpu in this browser');
  if ((await navigator.gpu.requestAdapter()) === null) return report('skipped', 'no WebGPU adapter');
  const device = await createWebGpuDevice();
  try {
    const scale = await device.createExecutable({
      format: 'wgsl',
      code: /* wgsl */ `
        struct C { factor: f32, n: u32 }
        @group(0) @binding(0) var<storage, read_write> data: array<f32>;
        @group(1) @binding(0) var<uniform> c: C;
        @compute @workgroup_size(64)
        fn scale(@builtin(global_invocation_id) g: vec3<u32>) {
          if (g.x < c.n) { data[g.x] = data[g.x] * c.factor; }
        }`,
      exports: [{ name: 'scale', bindingCount: 1, constantCount: 2, workgroupSize: [64, 1, 1] }],
    });
    const n = 256;
    const cb = device.createCommandBuffer({ mode: 'reusable', bindingCapacity: 1 });
    cb.begin();
    cb.dispatch(scale, 'scale', {
      workload: [n],
      constants: [constants.f32(1.5), n],
      bindings: [slotRef(0)],
    });
    cb.end();

    const q = QueueAffinity.ANY;
    const t = new TimelineSemaphore(0, { label: 'page' });
    const at = (value) => Fence.of({ semaphore: t, value });
    const data = device.createBuffer({ byteLength: n * 4, usage: BufferUsage.DEFAULT });
    const input = Float32Array.from({ length: n }, (_, i) => i);
    const output = new Float32Array(n);
    device.queueWrite(q, Fence.empty, at(1), input, { buffer: data });
    device.queueExecute(q, at(1), at(2), [cb], [[{ buffer: data }]]); // × 1.5
    device.queueExecute(q, at(2), at(3), [cb], [[{ buffer: data }]]); // × 1.5 again
    device.queueRead(q, at(3), at(4), { buffer: data }, output);
    await at(4).wait({ timeoutMs: 20_000 });

    for (let i = 0; i < n; i++) {
      if (output[i] !== i * 2.25) return report('failed', `data[${i}] = ${output[i]}, expected ${i * 2.25}`);
    }
    report('ok', `scaled ${n} floats twice on ${device.info.name}: data[${n - 1}] = ${output[n - 1]}`);
  } finally {
    await device.destroy();
  }
}

run().catch((error) => report('failed', String(error?.stack ?? error)));
