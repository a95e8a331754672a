/**
 * Where the CPU step's time goes: every dispatch of the reference training step (the step program the
 * demo records), run through the built kernel module on this thread, workgroup by workgroup, timed per
 * dispatch (median CPU time of the process over the samples: robust on a shared machine). Bindings are
 * plain SharedArrayBuffers, as the CPU device gives them (the GEMMs take their copy path), or, with
 * `--zero-copy`, one shared Wasm memory (the kernels' zero-copy extension).
 *
 *   pnpm --filter @keel/mlp build && node --import tsx bench/src/mlp/step-profile.ts [--samples N] [--zero-copy]
 *
 * Add `--experimental-wasm-relaxed-simd` after `node` on Node 20 to run the relaxed-SIMD GEMM (the log
 * says which variant ran).
 */
import { parseArgs } from 'node:util';
import { median } from '../harness.ts';
import {
  GEMM_SCRATCH_BYTES,
  initParams,
  MLP_CPU_EXPORTS,
  MLP_CPU_MODULE_URL,
  REFERENCE_DATASET,
  REFERENCE_MLP,
  SyntheticDataset,
  trainingStepProgram,
} from './keel-mlp.ts';

type Kernel = (ctx: object) => void;

interface Binding {
  readonly buffer: ArrayBufferLike;
  readonly byteOffset: number;
  readonly byteLength: number;
  readonly f32: Float32Array;
  readonly u32: Uint32Array;
  readonly memory: WebAssembly.Memory | undefined;
}

function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

export interface StepProfileRow {
  readonly name: string;
  readonly ms: number;
  readonly gflops: number | undefined;
}

export async function runStepProfile(samples: number, zeroCopy: boolean): Promise<StepProfileRow[]> {
  const mod = (await import(MLP_CPU_MODULE_URL.href)) as Record<string, unknown>;
  const config = REFERENCE_MLP;
  const program = trainingStepProgram(config);
  const total = program.buffers.reduce((s, b) => s + ((b.bytes + 63) & ~63), 0) + GEMM_SCRATCH_BYTES + 4096;
  const memory = zeroCopy
    ? new WebAssembly.Memory({
        initial: Math.ceil(total / 65536),
        maximum: Math.ceil(total / 65536),
        shared: true,
      })
    : undefined;
  const buffer = memory?.buffer ?? new SharedArrayBuffer(total);
  const bindings = new Map<string, Binding>();
  let at = 64;
  for (const b of program.buffers) {
    const n = b.bytes >> 2;
    bindings.set(b.name, {
      buffer,
      byteOffset: at,
      byteLength: b.bytes,
      f32: new Float32Array(buffer, at, n),
      u32: new Uint32Array(buffer, at, n),
      memory,
    });
    at = (at + b.bytes + 63) & ~63;
  }
  const localMemory = zeroCopy ? { byteOffset: at, byteLength: GEMM_SCRATCH_BYTES } : undefined;
  const params = initParams(config);
  for (const [i, w] of params.weights.entries()) bindings.get(`w${i}`)!.f32.set(w);
  const d = config.layers;
  const batch = new SyntheticDataset({
    ...REFERENCE_DATASET,
    inputSize: d[0]!,
    classes: d[d.length - 1]!,
  }).batch(0, config.batch);
  bindings.get('x')!.f32.set(batch.x);
  bindings.get('labels')!.u32.set(batch.labels);

  const runs: { name: string; run: () => void; flop: number | undefined }[] = [];
  for (const stage of program.stages) {
    for (const dsp of stage) {
      const count = MLP_CPU_EXPORTS.find((e) => e.name === dsp.kernel)!.workgroupCount!(dsp.workload);
      const workgroupId: [number, number, number] = [0, 0, 0];
      const c = dsp.constants;
      const ctx = {
        workgroupId,
        workgroupCount: count,
        workgroupSize: [1, 1, 1],
        bindings: dsp.bindings.map((n) => bindings.get(n)!),
        constants: c,
        constantsF32: new Float32Array(c.buffer, c.byteOffset, c.length),
        workerIndex: 0,
        localMemory,
      };
      const kernel = mod[dsp.kernel] as Kernel;
      const gemm = dsp.kernel === 'matmul' || dsp.kernel === 'linear' || dsp.kernel === 'matmul_relu_grad';
      runs.push({
        name: `${dsp.kernel} ${gemm ? `${c[0]}x${c[1]}x${c[2]}` : dsp.workload.join('x')}`,
        flop: gemm ? 2 * c[0]! * c[1]! * c[2]! : undefined,
        run: () => {
          for (let y = 0; y < count[1]; y++)
            for (let x = 0; x < count[0]; x++) {
              workgroupId[0] = x;
              workgroupId[1] = y;
              kernel(ctx);
            }
        },
      });
    }
  }
  const times = runs.map(() => [] as number[]);
  for (let s = 0; s < samples + 2; s++) {
    runs.forEach((r, i) => {
      const t = cpuMs();
      r.run();
      if (s >= 2) times[i]!.push(cpuMs() - t);
    });
  }
  return runs.map((r, i) => {
    const ms = median(times[i]!);
    return { name: r.name, ms, gflops: r.flop === undefined ? undefined : r.flop / ms / 1e6 };
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: { samples: { type: 'string', default: '15' }, 'zero-copy': { type: 'boolean', default: false } },
  });
  const mod = (await import(MLP_CPU_MODULE_URL.href)) as { gemmVariant?: string };
  const rows = await runStepProfile(Number(values.samples), values['zero-copy']);
  let sum = 0;
  for (const r of rows) {
    sum += r.ms;
    process.stdout.write(
      `${r.name.padEnd(32)} ${r.ms.toFixed(3).padStart(8)} ms${r.gflops === undefined ? '' : `  ${r.gflops.toFixed(1).padStart(5)} GFLOP/s`}\n`,
    );
  }
  process.stdout.write(
    `total ${sum.toFixed(2)} ms CPU time on one thread (gemm ${mod.gemmVariant ?? '?'}, ${values['zero-copy'] ? 'zero-copy' : 'copy'} path)\n`,
  );
  process.exit(0);
}
