/**
 * The training case with a real kernel: one reusable command buffer (an SGD step) replayed every step
 * with a binding table built from the leases, on resident weights. Weights are uploaded once and read
 * back once; every step uploads the gradient batch and reads the output back.
 */
import { type Device, type Executable, slotRef } from '@keel/hal';
import { expect } from 'vitest';
import { ResidencyManager, Tensor } from '../src/index';
import { floats, signalOf } from './helpers';

const WGSL = /* wgsl */ `
struct Params { lr: f32, n: u32, glen: u32, olen: u32 }
@group(0) @binding(0) var<storage, read_write> w: array<f32>;
@group(0) @binding(1) var<storage, read> g: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(1) @binding(0) var<uniform> p: Params;
@compute @workgroup_size(64)
fn sgd(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x;
  if (i >= p.n) { return; }
  w[i] = w[i] - p.lr * g[i % p.glen];
  if (i < p.olen) { out[i] = w[i]; }
}`;

const EXPORTS = [{ name: 'sgd', bindingCount: 3, constantCount: 4, workgroupSize: [64, 1, 1] as const }];

function sgdExecutable(device: Device): Promise<Executable> {
  if (device.info.backend === 'webgpu') {
    return device.createExecutable({ format: 'wgsl', code: WGSL, exports: EXPORTS, label: 'sgd' });
  }
  return device.createExecutable({
    format: 'js-module',
    url: new URL('./fixtures/sgd.js', import.meta.url),
    exports: EXPORTS,
    label: 'sgd',
  });
}

export async function trainWithKernel(device: Device): Promise<void> {
  const n = 4096;
  const glen = 256;
  const olen = 32;
  const steps = 8;
  const lr = 0.125; // exact in f32: the host model matches bit for bit
  const m = new ResidencyManager(device, { label: 'train' });
  const exe = await sgdExecutable(device);
  const cb = device.createCommandBuffer({ mode: 'reusable', bindingCapacity: 3, label: 'sgd step' });
  cb.begin();
  const lrBits = new Uint32Array(new Float32Array([lr]).buffer)[0]!;
  cb.dispatch(exe, 'sgd', {
    workload: [n],
    constants: [lrBits, n, glen, olen],
    bindings: [slotRef(0), slotRef(1), slotRef(2)],
  });
  cb.end();

  const w0 = floats(n, 5).map((v) => Math.round(v * 8) / 8);
  const weights = Tensor.fromHost('f32', [n], w0, { copy: true, label: 'weights' });
  const gradient = Tensor.empty('f32', [glen], { label: 'gradient' });
  const output = Tensor.empty('f32', [olen], { label: 'output' });
  const model = Float32Array.from(w0);
  for (let step = 0; step < steps; step++) {
    const g = floats(glen, 200 + step).map((v) => Math.round(v * 4) / 4);
    gradient.write(g);
    const leases = m.acquireAll([
      { tensor: weights, access: 'readwrite' },
      { tensor: gradient, access: 'read' },
      { tensor: output, access: 'write' },
    ]);
    const done = signalOf(device);
    device.queueExecute(0xffffffff, leases.wait, done, [cb], [leases.leases.map((l) => l.ref)]);
    leases.release(done);
    for (let i = 0; i < n; i++) model[i] = Math.fround(model[i]! - Math.fround(lr * g[i % glen]!));
    expect(Array.from(await output.toHost())).toEqual(Array.from(model.subarray(0, olen)));
    expect(m.counters.hostToDeviceBytes).toBe(n * 4 + (step + 1) * glen * 4);
  }
  expect(Array.from(await weights.toHost())).toEqual(Array.from(model));
  const c = m.counters;
  expect(c.hostToDeviceBytes).toBe(n * 4 + steps * glen * 4);
  expect(c.deviceToHostBytes).toBe(steps * olen * 4 + n * 4);
  weights.release();
  gradient.release();
  output.release();
  await m.dispose();
}
