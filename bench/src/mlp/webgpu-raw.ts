/**
 * The reference MLP's step program on raw WebGPU (the `webgpu` package, Dawn) with everything built
 * up front: pipelines, buffers, bind groups, the constants of every dispatch in one uniform buffer
 * (256-byte slots). Per step: write the batch, encode one compute pass with every dispatch, copy the
 * loss to a staging buffer, submit, map it. The floor Keel's WebGPU device replay is compared with,
 * and Keel's WGSL kernels against TF.js webgpu on the same adapter.
 */
import { median } from '../harness.ts';
import {
  biasName,
  initParams,
  type MlpConfig,
  REFERENCE_MLP,
  SyntheticDataset,
  trainingStepProgram,
  weightName,
} from './keel-mlp.ts';
import { MLP_WEBGPU_EXPORTS, MLP_WGSL } from './keel-mlp-webgpu.ts';

export interface WebGpuRawRunResult {
  readonly msPerStep: number;
  readonly stepMs: number[];
  readonly losses: number[];
  readonly adapter: string;
}

export async function runWebGpuRawMlp(
  options: { config?: MlpConfig; steps?: number; warmup?: number; batches?: number } = {},
): Promise<WebGpuRawRunResult> {
  const config = options.config ?? REFERENCE_MLP;
  const steps = options.steps ?? 10;
  const warmup = options.warmup ?? 3;
  const { create, globals } = await import('webgpu');
  Object.assign(globalThis, globals);
  const gpu = create([]);
  const adapter = await gpu.requestAdapter();
  if (adapter === null) throw new Error('webgpu: no adapter');
  const info = adapter.info;
  const adapterName = [info.vendor, info.architecture, info.device, info.description]
    .filter((s) => s)
    .join(' ');
  const device = await adapter.requestDevice();
  try {
    const module = device.createShaderModule({ code: MLP_WGSL, label: 'keel mlp' });
    const pipelines = new Map<string, GPUComputePipeline>();
    const program = trainingStepProgram(config);
    const buffers = new Map<string, GPUBuffer>();
    for (const b of program.buffers) {
      buffers.set(
        b.name,
        device.createBuffer({
          size: Math.max(16, (b.bytes + 15) & ~15),
          usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
        }),
      );
    }
    const dispatches = program.stages.flat();
    const uniform = device.createBuffer({
      size: 256 * dispatches.length,
      usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
    });
    const words = new Uint32Array(64 * dispatches.length);
    const encoded = dispatches.map((d, i) => {
      let pipeline = pipelines.get(d.kernel);
      if (pipeline === undefined) {
        pipeline = device.createComputePipeline({
          layout: 'auto',
          compute: { module, entryPoint: d.kernel },
        });
        pipelines.set(d.kernel, pipeline);
      }
      words.set(d.constants, 64 * i);
      const count = MLP_WEBGPU_EXPORTS.find((e) => e.name === d.kernel)!.workgroupCount!(d.workload);
      return {
        pipeline,
        count,
        group0: device.createBindGroup({
          layout: pipeline.getBindGroupLayout(0),
          entries: d.bindings.map((name, binding) => ({ binding, resource: { buffer: buffers.get(name)! } })),
        }),
        group1: device.createBindGroup({
          layout: pipeline.getBindGroupLayout(1),
          entries: [{ binding: 0, resource: { buffer: uniform, offset: 256 * i, size: 32 } }],
        }),
      };
    });
    device.queue.writeBuffer(uniform, 0, words);
    const init = initParams(config);
    for (const [i, w] of init.weights.entries()) device.queue.writeBuffer(buffers.get(weightName(i))!, 0, w);
    for (const [i, b] of init.biases.entries()) device.queue.writeBuffer(buffers.get(biasName(i))!, 0, b);
    const d = config.layers;
    const data = new SyntheticDataset({ inputSize: d[0]!, classes: d[d.length - 1]!, seed: 0x64617461 });
    const batches = Array.from({ length: options.batches ?? 8 }, (_, i) => data.batch(i, config.batch));
    const staging = device.createBuffer({
      size: 16,
      usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
    });
    const losses: number[] = [];
    const times: number[] = [];
    for (let s = 0; s < warmup + steps; s++) {
      const batch = batches[s % batches.length]!;
      const start = performance.now();
      device.queue.writeBuffer(buffers.get('x')!, 0, batch.x);
      device.queue.writeBuffer(buffers.get('labels')!, 0, batch.labels);
      const encoder = device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      for (const e of encoded) {
        pass.setPipeline(e.pipeline);
        pass.setBindGroup(0, e.group0);
        pass.setBindGroup(1, e.group1);
        pass.dispatchWorkgroups(e.count[0], e.count[1], e.count[2]);
      }
      pass.end();
      encoder.copyBufferToBuffer(buffers.get('loss')!, 0, staging, 0, 16);
      device.queue.submit([encoder.finish()]);
      await staging.mapAsync(GPUMapMode.READ);
      losses.push(new Float32Array(staging.getMappedRange(0, 4))[0]!);
      staging.unmap();
      if (s >= warmup) times.push(performance.now() - start);
    }
    return { msPerStep: median(times), stepMs: times, losses, adapter: adapterName };
  } finally {
    device.destroy();
    // Keep Dawn's GPU object referenced until its device is gone (collecting it early aborts Dawn).
    void gpu;
  }
}
