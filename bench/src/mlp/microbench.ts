/**
 * Microbenchmark of the MLP's CPU kernels against TensorFlow.js's wasm backend, one thread each, on the
 * GEMMs of the reference training step (and the memory-bound kernels). Interleaved samples, medians.
 *
 *   pnpm --filter @keel/mlp build && node --import tsx bench/src/mlp/microbench.ts [--samples N] [--json]
 *
 * Keel columns: `zero-copy` runs the kernel through the ABI on bindings that expose a shared Wasm
 * memory (the proposed ABI addition); `copy` runs it on plain SharedArrayBuffer bindings (the device
 * today: the kernel copies its tiles). Both split the work into the CPU descriptors' default
 * workgroups and run them all on this thread. TF.js: `tf.matMul(a, b, transA, transB)` on the wasm
 * backend (XNNPACK; single-threaded in Node), result read back with `await data()`.
 *
 * Two figures per cell: GFLOP/s from the median wall time, and from the median CPU time of the process
 * (`process.cpuUsage`, user + system), which is far less sensitive to other processes sharing the cores
 * (everything here runs on this one thread, so CPU time ≈ the time the work itself took).
 */
import { parseArgs } from 'node:util';
import { median } from '../harness.ts';
import {
  GEMM_SCRATCH_BYTES,
  MLP_CPU_EXPORTS,
  MLP_CPU_MODULE_URL,
  type MlpKernelName,
  matmulConstants,
} from './keel-mlp.ts';

interface Binding {
  readonly buffer: ArrayBufferLike;
  readonly byteOffset: number;
  readonly byteLength: number;
  readonly f32: Float32Array;
  readonly u32: Uint32Array;
  readonly memory: WebAssembly.Memory | undefined;
}
type Kernel = (ctx: object) => void;

interface GemmCase {
  readonly name: string;
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly transA: boolean;
  readonly transB: boolean;
  readonly kernel: 'linear' | 'matmul' | 'matmul_relu_grad';
}

/** The GEMMs of one reference training step (784-512-512-10, batch 256). */
export const STEP_GEMMS: readonly GemmCase[] = [
  { name: 'fwd1 256x512x784 NN', m: 256, n: 512, k: 784, transA: false, transB: false, kernel: 'linear' },
  { name: 'fwd2 256x512x512 NN', m: 256, n: 512, k: 512, transA: false, transB: false, kernel: 'linear' },
  { name: 'fwd3 256x10x512 NN', m: 256, n: 10, k: 512, transA: false, transB: false, kernel: 'linear' },
  {
    name: 'dX3 256x512x10 NT',
    m: 256,
    n: 512,
    k: 10,
    transA: false,
    transB: true,
    kernel: 'matmul_relu_grad',
  },
  {
    name: 'dX2 256x512x512 NT',
    m: 256,
    n: 512,
    k: 512,
    transA: false,
    transB: true,
    kernel: 'matmul_relu_grad',
  },
  { name: 'dW3 512x10x256 TN', m: 512, n: 10, k: 256, transA: true, transB: false, kernel: 'matmul' },
  { name: 'dW2 512x512x256 TN', m: 512, n: 512, k: 256, transA: true, transB: false, kernel: 'matmul' },
  { name: 'dW1 784x512x256 TN', m: 784, n: 512, k: 256, transA: true, transB: false, kernel: 'matmul' },
];

class Arena {
  readonly memory: WebAssembly.Memory | undefined;
  readonly buffer: ArrayBufferLike;
  readonly localMemory: { byteOffset: number; byteLength: number } | undefined;
  private at = 64;
  constructor(bytes: number, wasm: boolean) {
    const total = bytes + GEMM_SCRATCH_BYTES + 128;
    if (wasm) {
      const pages = Math.ceil(total / 65536);
      this.memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
      this.buffer = this.memory.buffer;
      this.localMemory = { byteOffset: (bytes + 127) & ~63, byteLength: GEMM_SCRATCH_BYTES };
    } else {
      this.memory = undefined;
      this.buffer = new SharedArrayBuffer(total);
      this.localMemory = undefined;
    }
  }
  binding(elements: number, fill: (i: number) => number): Binding {
    const byteOffset = this.at;
    const byteLength = 4 * elements;
    this.at = (this.at + byteLength + 63) & ~63;
    const f32 = new Float32Array(this.buffer, byteOffset, elements);
    for (let i = 0; i < elements; i++) f32[i] = fill(i);
    return {
      buffer: this.buffer,
      byteOffset,
      byteLength,
      f32,
      u32: new Uint32Array(this.buffer, byteOffset, elements),
      memory: this.memory,
    };
  }
}

function dispatcher(
  kernel: Kernel,
  name: MlpKernelName,
  workload: number[],
  bindings: Binding[],
  constants: Uint32Array,
  localMemory: object | undefined,
): () => void {
  const c = MLP_CPU_EXPORTS.find((e) => e.name === name)!.workgroupCount!(workload);
  const workgroupId: [number, number, number] = [0, 0, 0];
  const ctx = {
    workgroupId,
    workgroupCount: c,
    workgroupSize: [1, 1, 1],
    bindings,
    constants,
    constantsF32: new Float32Array(constants.buffer, constants.byteOffset, constants.length),
    workerIndex: 0,
    localMemory,
  };
  return () => {
    for (let z = 0; z < c[2]; z++)
      for (let y = 0; y < c[1]; y++)
        for (let x = 0; x < c[0]; x++) {
          workgroupId[0] = x;
          workgroupId[1] = y;
          workgroupId[2] = z;
          kernel(ctx);
        }
  };
}

export interface MicrobenchCell {
  /** From the median wall time. */
  readonly wall: number;
  /** From the median CPU time. */
  readonly cpu: number;
}

export interface MicrobenchRow {
  readonly name: string;
  readonly gflops: {
    readonly zeroCopy: MicrobenchCell;
    readonly copy: MicrobenchCell;
    readonly tfjsWasm: MicrobenchCell;
  };
}

function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

export async function runMicrobench(
  samples = 15,
  log: (s: string) => void = () => {},
): Promise<MicrobenchRow[]> {
  const kernels = (await import(MLP_CPU_MODULE_URL.href)) as Record<string, Kernel>;
  const tf = await import('@tensorflow/tfjs');
  const { setWasmPaths } = await import('@tensorflow/tfjs-backend-wasm');
  const { createRequire } = await import('node:module');
  const path = await import('node:path');
  const dist = path.join(
    path.dirname(createRequire(import.meta.url).resolve('@tensorflow/tfjs-backend-wasm/package.json')),
    'dist',
  );
  setWasmPaths(`${dist}${path.sep}`);
  if (!(await tf.setBackend('wasm'))) throw new Error('tfjs wasm backend failed');
  await tf.ready();

  const rows: MicrobenchRow[] = [];
  for (const g of STEP_GEMMS) {
    const { m, n, k, transA, transB } = g;
    const variants: Record<string, () => void | Promise<void>> = {};
    for (const wasm of [true, false]) {
      const arena = new Arena(4 * (m * k + k * n + 3 * m * n + n) + 4096, wasm);
      const a = arena.binding(m * k, (i) => ((i * 7) % 13) / 13 - 0.5);
      const b = arena.binding(k * n, (i) => ((i * 5) % 11) / 11 - 0.5);
      const extra =
        g.kernel === 'matmul'
          ? undefined
          : arena.binding(g.kernel === 'linear' ? n : m * n, (i) => (i % 3) - 1);
      const c = arena.binding(m * n, () => 0);
      const bindings = extra === undefined ? [a, b, c] : [a, b, extra, c];
      const beta = g.kernel === 'matmul' ? 1 : 0; // the step's weight update: W -= lr · Xᵀ·dY
      const constants = matmulConstants({
        m,
        n,
        k,
        transA,
        transB,
        relu: g.kernel === 'linear',
        alpha: beta ? -0.05 : 1,
        beta,
      });
      variants[wasm ? 'zeroCopy' : 'copy'] = dispatcher(
        kernels[g.kernel]!,
        g.kernel,
        [n, m],
        bindings,
        constants,
        arena.localMemory,
      );
    }
    const ta = tf.randomUniform(transA ? [k, m] : [m, k]) as import('@tensorflow/tfjs').Tensor2D;
    const tb = tf.randomUniform(transB ? [n, k] : [k, n]) as import('@tensorflow/tfjs').Tensor2D;
    variants.tfjsWasm = async () => {
      const out = tf.matMul(ta, tb, transA, transB);
      await out.data();
      out.dispose();
    };
    const times: Record<string, number[]> = { zeroCopy: [], copy: [], tfjsWasm: [] };
    const cpuTimes: Record<string, number[]> = { zeroCopy: [], copy: [], tfjsWasm: [] };
    const slow = transA || transB; // TF.js's transposed matmuls are slow: fewer samples there
    const count = slow ? Math.max(5, Math.ceil(samples / 3)) : samples;
    for (let s = 0; s < count + 2; s++) {
      for (const key of Object.keys(variants)) {
        const start = performance.now();
        const cpuStart = cpuMs();
        await variants[key]!();
        if (s >= 2) {
          times[key]!.push(performance.now() - start);
          cpuTimes[key]!.push(cpuMs() - cpuStart);
        }
      }
    }
    ta.dispose();
    tb.dispose();
    const flop = 2 * m * n * k;
    const gf = (key: string): MicrobenchCell => ({
      wall: flop / median(times[key]!) / 1e6,
      cpu: flop / median(cpuTimes[key]!) / 1e6,
    });
    const row = {
      name: g.name,
      gflops: { zeroCopy: gf('zeroCopy'), copy: gf('copy'), tfjsWasm: gf('tfjsWasm') },
    };
    const cell = (c: MicrobenchCell): string =>
      `${c.wall.toFixed(1).padStart(5)} (cpu ${c.cpu.toFixed(1).padStart(5)})`;
    log(
      `${g.name.padEnd(22)} keel zero-copy ${cell(row.gflops.zeroCopy)}  copy ${cell(row.gflops.copy)}  tfjs-wasm ${cell(row.gflops.tfjsWasm)} GFLOP/s`,
    );
    rows.push(row);
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: { samples: { type: 'string', default: '15' }, json: { type: 'boolean', default: false } },
  });
  const rows = await runMicrobench(Number(values.samples), (s) => process.stderr.write(`${s}\n`));
  if (values.json) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
  process.exit(0);
}
