/**
 * Per-kernel microbenchmark of the MLP's WGSL kernels on raw WebGPU (Dawn): every dispatch of the
 * reference training step, timed on its own (`reps` copies in one compute pass, submit, wait), then the
 * whole step in one pass. Variants (directories holding a `wgsl.ts` and a `descriptors.ts`, e.g. a copy
 * of an older `packages/mlp/src/webgpu/`) are interleaved round by round; figures are medians.
 *
 *   node --import tsx bench/src/mlp/webgpu-kernels.ts [--rounds N] [--reps N] [--tilings A,B] [variant-dir ...]
 *
 * `--tilings` adds a variant per GEMM tiling of `@keel/mlp` (the spelling of `parseGemmTiling`, e.g.
 * `16x16x8,s64x64x16r4x4`). Without a variant it times the kernels of `@keel/mlp` as shipped (its build:
 * `pnpm build` first).
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  initParams,
  MLP_WEBGPU_EXPORTS,
  MLP_WGSL,
  mlpWgslExecutableSource,
  parseGemmTiling,
  REFERENCE_MLP,
  trainingStepProgram,
} from '@keel/mlp';

interface Variant {
  readonly name: string;
  readonly wgsl: string;
  readonly exports: readonly {
    name: string;
    workgroupCount?: (w: readonly number[]) => readonly number[];
  }[];
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

async function loadVariant(dir: string): Promise<Variant> {
  const wgsl = (await import(pathToFileURL(resolve(dir, 'wgsl.ts')).href)) as { MLP_WGSL: string };
  const desc = (await import(pathToFileURL(resolve(dir, 'descriptors.ts')).href)) as {
    MLP_WEBGPU_EXPORTS: Variant['exports'];
  };
  return { name: dir, wgsl: wgsl.MLP_WGSL, exports: desc.MLP_WEBGPU_EXPORTS };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  let rounds = 5;
  let reps = 3;
  const dirs: string[] = [];
  const tiled: Variant[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--rounds') rounds = Number(args[++i]);
    else if (args[i] === '--reps') reps = Number(args[++i]);
    else if (args[i] === '--tilings') {
      for (const spec of (args[++i] ?? '').split(',').filter((t) => t !== '')) {
        const source = mlpWgslExecutableSource(parseGemmTiling(spec));
        tiled.push({ name: spec, wgsl: source.code, exports: source.exports });
      }
    } else dirs.push(args[i]!);
  }
  const variants =
    dirs.length === 0 && tiled.length === 0
      ? [{ name: '@keel/mlp', wgsl: MLP_WGSL, exports: MLP_WEBGPU_EXPORTS }]
      : [...tiled, ...(await Promise.all(dirs.map(loadVariant)))];

  const { create, globals } = await import('webgpu');
  Object.assign(globalThis, globals);
  const gpu = create([]);
  const adapter = await gpu.requestAdapter();
  if (adapter === null) throw new Error('webgpu: no adapter');
  const device = await adapter.requestDevice();

  const config = REFERENCE_MLP;
  const program = trainingStepProgram(config);
  const dispatches = program.stages.flat();
  const buffers = new Map<string, GPUBuffer>();
  let seed = 1;
  const rand = (): number => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return seed / 2 ** 32;
  };
  const init = initParams(config);
  for (const b of program.buffers) {
    const buffer = device.createBuffer({
      size: Math.max(16, (b.bytes + 15) & ~15),
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
    });
    const n = b.bytes / 4;
    let data: Float32Array | Uint32Array;
    if (b.name === 'labels') data = Uint32Array.from({ length: n }, () => Math.floor(rand() * 10));
    else if (b.name.startsWith('w')) data = init.weights[Number(b.name.slice(1))]!;
    else if (b.name.startsWith('b')) data = init.biases[Number(b.name.slice(1))]!;
    else if (b.name.startsWith('dact')) data = Float32Array.from({ length: n }, () => (rand() - 0.5) * 1e-3);
    else data = Float32Array.from({ length: n }, () => rand() * 2 - 0.5);
    device.queue.writeBuffer(buffer, 0, data as Float32Array<ArrayBuffer>);
    buffers.set(b.name, buffer);
  }

  const prepared = variants.map((v) => {
    const module = device.createShaderModule({ code: v.wgsl });
    const pipelines = new Map<string, GPUComputePipeline>();
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
      const count = v.exports.find((e) => e.name === d.kernel)!.workgroupCount!(d.workload);
      const c = d.constants;
      const label =
        d.kernel === 'matmul' || d.kernel === 'linear' || d.kernel === 'matmul_relu_grad'
          ? `${d.kernel}${c[3]! & 1 ? ' TA' : ''}${c[3]! & 2 ? ' TB' : ''} ${c[0]}x${c[1]}x${c[2]}`
          : `${d.kernel} ${Array.from(c.slice(0, 2)).join('x')}`;
      return {
        label,
        pipeline,
        count: [count[0]!, count[1]!, count[2]!] as const,
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
    return encoded;
  });

  type Encoded = (typeof prepared)[number][number];
  const time = async (list: readonly Encoded[], copies: number): Promise<number> => {
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    for (let r = 0; r < copies; r++) {
      for (const e of list) {
        pass.setPipeline(e.pipeline);
        pass.setBindGroup(0, e.group0);
        pass.setBindGroup(1, e.group1);
        pass.dispatchWorkgroups(e.count[0], e.count[1], e.count[2]);
      }
    }
    pass.end();
    const start = performance.now();
    device.queue.submit([encoder.finish()]);
    await device.queue.onSubmittedWorkDone();
    return (performance.now() - start) / copies;
  };

  // Warm-up (pipeline compilation happens lazily in lavapipe).
  for (const encoded of prepared) await time(encoded, 1);
  const samples = prepared.map((encoded) => encoded.map(() => [] as number[]));
  const steps = prepared.map(() => [] as number[]);
  for (let round = 0; round < rounds; round++) {
    for (const [vi, encoded] of prepared.entries()) {
      for (const [di, e] of encoded.entries()) samples[vi]![di]!.push(await time([e], reps));
      steps[vi]!.push(await time(encoded, 1));
    }
  }
  const rows = prepared[0]!.map((e, di) => ({
    kernel: e.label,
    ...Object.fromEntries(variants.map((_, vi) => [`v${vi}`, Number(median(samples[vi]![di]!).toFixed(2))])),
  }));
  rows.push({
    kernel: 'sum of dispatches',
    ...Object.fromEntries(
      variants.map((_, vi) => [
        `v${vi}`,
        Number(samples[vi]!.reduce((s, xs) => s + median(xs), 0).toFixed(2)),
      ]),
    ),
  });
  rows.push({
    kernel: 'whole step (one pass)',
    ...Object.fromEntries(variants.map((_, vi) => [`v${vi}`, Number(median(steps[vi]!).toFixed(2))])),
  });
  for (const [vi, v] of variants.entries()) console.log(`v${vi}: ${v.name}`);
  console.table(rows);
  device.destroy();
  void gpu;
}

await main();
