/**
 * Raw WebGPU (Dawn, the `webgpu` package) for testing the MLP's WGSL kernels without Keel's device:
 * one pipeline per entry point ('auto' layouts), one GPUBuffer per binding, constants in a uniform
 * buffer at @group(1) @binding(0) (Keel's convention).
 */

import type { MlpKernelName } from '../src/kernel-interface';
import { mlpWebgpuExports } from '../src/webgpu/descriptors';
import { type GemmTiling, WGSL_GEMM_TILING } from '../src/webgpu/gemm-tiling';
import { mlpWgsl } from '../src/webgpu/wgsl';

export interface Gpu {
  /** Dawn's GPU object: it must stay referenced while its devices live (collecting it aborts Dawn). */
  readonly gpu: GPU;
  readonly device: GPUDevice;
  readonly adapter: string;
  /** The GEMM tiling the kernels were generated for. */
  readonly tiling: GemmTiling;
  pipeline(name: MlpKernelName): GPUComputePipeline;
}

/** The GPU with the kernels generated for `tiling`, or a reason why there is none. */
export async function acquireGpu(tiling: GemmTiling = WGSL_GEMM_TILING): Promise<Gpu | string> {
  let gpu: GPU;
  try {
    const webgpu = await import('webgpu');
    Object.assign(globalThis, webgpu.globals);
    gpu = webgpu.create([]);
  } catch (error) {
    return `the 'webgpu' package does not load (${String(error)})`;
  }
  const adapter = await gpu.requestAdapter();
  if (adapter === null) return 'no WebGPU adapter';
  const device = await adapter.requestDevice();
  device.pushErrorScope('validation');
  const module = device.createShaderModule({ code: mlpWgsl(tiling), label: 'keel mlp' });
  const info = await module.getCompilationInfo();
  const errors = info.messages.filter((m) => m.type === 'error');
  if (errors.length > 0)
    throw new Error(`WGSL: ${errors.map((m) => `${m.lineNum}:${m.linePos} ${m.message}`).join('\n')}`);
  const pipelines = new Map<string, GPUComputePipeline>();
  for (const e of mlpWebgpuExports(tiling)) {
    pipelines.set(
      e.name,
      device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: e.name } }),
    );
  }
  const error = await device.popErrorScope();
  if (error !== null) throw new Error(`pipelines: ${error.message}`);
  const i = adapter.info;
  return {
    gpu,
    device,
    adapter: [i.vendor, i.architecture, i.device, i.description].filter((s) => s).join(' '),
    tiling,
    pipeline: (name) => pipelines.get(name)!,
  };
}

export function countOf(
  name: MlpKernelName,
  workload: readonly number[],
  tiling: GemmTiling = WGSL_GEMM_TILING,
): [number, number, number] {
  const c = mlpWebgpuExports(tiling).find((e) => e.name === name)!.workgroupCount!(workload);
  return [c[0], c[1], c[2]];
}

/** A storage buffer holding `data` (or `bytes` zero bytes). */
export function storage(
  gpu: Gpu,
  data: Float32Array<ArrayBuffer> | Uint32Array<ArrayBuffer> | number,
): GPUBuffer {
  const bytes = typeof data === 'number' ? data : data.byteLength;
  const buffer = gpu.device.createBuffer({
    size: Math.max(16, (bytes + 15) & ~15),
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
  });
  if (typeof data !== 'number') gpu.device.queue.writeBuffer(buffer, 0, data);
  return buffer;
}

export interface GpuDispatch {
  readonly kernel: MlpKernelName;
  readonly bindings: readonly GPUBuffer[];
  readonly constants: Uint32Array;
  readonly count: readonly [number, number, number];
}

/** Encodes the dispatches in order (one pass each) and submits them. */
export function run(gpu: Gpu, dispatches: readonly GpuDispatch[]): void {
  const { device } = gpu;
  const encoder = device.createCommandEncoder();
  for (const d of dispatches) {
    const pipeline = gpu.pipeline(d.kernel);
    const words = new Uint32Array(8);
    words.set(d.constants);
    const uniform = device.createBuffer({
      size: 32,
      usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
    });
    device.queue.writeBuffer(uniform, 0, words);
    const group0 = device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: d.bindings.map((buffer, binding) => ({ binding, resource: { buffer } })),
    });
    const group1 = device.createBindGroup({
      layout: pipeline.getBindGroupLayout(1),
      entries: [{ binding: 0, resource: { buffer: uniform } }],
    });
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, group0);
    pass.setBindGroup(1, group1);
    pass.dispatchWorkgroups(d.count[0], d.count[1], d.count[2]);
    pass.end();
  }
  device.queue.submit([encoder.finish()]);
}

/** Reads `elements` f32 back from `buffer`. */
export async function readF32(
  gpu: Gpu,
  buffer: GPUBuffer,
  elements: number,
): Promise<Float32Array<ArrayBuffer>> {
  const { device } = gpu;
  const staging = device.createBuffer({
    size: Math.max(16, (4 * elements + 15) & ~15),
    usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
  });
  const encoder = device.createCommandEncoder();
  encoder.copyBufferToBuffer(buffer, 0, staging, 0, staging.size);
  device.queue.submit([encoder.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const out = new Float32Array(staging.getMappedRange().slice(0, 4 * elements));
  staging.unmap();
  staging.destroy();
  return out;
}
