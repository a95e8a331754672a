/**
 * The fused multiply-add peak of 128-bit WebAssembly SIMD on this machine: what any Wasm kernel, Keel's
 * or another's, can get from these cores at best. The `mlp` suite measures it in its CPU rounds, next
 * to Keel's CPU step and numpy's, and derives the floor of the step: its GEMM FLOPs all at this peak,
 * nothing else done (no copies, no softmax, no barriers). `keel_cpu_vs_numpy` cannot go below that
 * floor divided by numpy's step.
 *
 * The kernel: a loop of 12 independent `f32x4` accumulators, each updated 4 times per iteration with
 * `f32x4.relaxed_madd` (one fused multiply-add: 8 FLOPs) where the engine compiles relaxed SIMD, else
 * with `f32x4.mul` + `f32x4.add` (the same 8 FLOPs in two instructions). Twelve chains hide the FMA
 * latency (4 cycles at 2 FMAs per cycle needs 8) and fit V8's 16 x64 vector registers with the two
 * operands. Threads: one worker thread per requested thread, all started together on a shared flag;
 * each times its own loop; the figure is the sum of their rates. Each thread takes the best of `reps`
 * timed runs (the figure most favourable to any kernel, so the floor is a true lower bound).
 */
import { Worker } from 'node:worker_threads';

const CHAINS = 12;
const UNROLL = 4;
/** FLOPs per loop iteration: every chain, UNROLL times, 4 lanes, multiply and add. */
export const FLOPS_PER_ITERATION = CHAINS * UNROLL * 4 * 2;

function wat(relaxed: boolean): string {
  const chains = Array.from({ length: CHAINS }, (_, i) => i);
  const step = (i: number): string =>
    relaxed
      ? `(local.set $c${i} (f32x4.relaxed_madd (local.get $c${i}) (local.get $a) (local.get $b)))`
      : `(local.set $c${i} (f32x4.add (f32x4.mul (local.get $c${i}) (local.get $a)) (local.get $b)))`;
  const body = Array.from({ length: UNROLL }, () => chains.map(step).join('\n        ')).join('\n        ');
  const sum = chains.slice(1).reduce((acc, i) => `(f32x4.add ${acc} (local.get $c${i}))`, '(local.get $c0)');
  return `(module
  (func (export "run") (param $n i32) (result f32)
    (local $a v128) (local $b v128) ${chains.map((i) => `(local $c${i} v128)`).join(' ')}
    (local.set $a (f32x4.splat (f32.const 0.999999)))
    (local.set $b (f32x4.splat (f32.const 0.000001)))
    ${chains.map((i) => `(local.set $c${i} (f32x4.splat (f32.const ${i + 1})))`).join('\n    ')}
    (block $done
      (loop $next
        (br_if $done (i32.eqz (local.get $n)))
        ${body}
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $next)))
    (f32x4.extract_lane 0 ${sum})))`;
}

/** The kernel's module: relaxed SIMD where this engine compiles it (see relaxed-simd.ts), else plain. */
export async function fmaPeakModule(): Promise<{ bytes: Uint8Array; relaxed: boolean }> {
  // Loaded here, not at import: the suite's other sides (and the GPU machine's entry) never load it.
  const { default: wabtInit } = await import('wabt');
  const wabt = await wabtInit();
  for (const relaxed of [true, false]) {
    const parsed = wabt.parseWat('fma-peak.wat', wat(relaxed), { simd: true, relaxed_simd: relaxed });
    try {
      const bytes = new Uint8Array(parsed.toBinary({}).buffer);
      if (WebAssembly.validate(bytes)) return { bytes, relaxed };
    } finally {
      parsed.destroy();
    }
  }
  throw new Error('wasm-fma-peak: this engine compiles no 128-bit SIMD');
}

// The worker: compiles the module, waits for the start flag, times `reps` runs of `iterations`
// iterations and answers its best rate in GFLOP/s.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { bytes, iterations, reps, flag, flops } = workerData;
const { run } = new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports;
run(1000); // compile tiers
const start = new Int32Array(flag);
Atomics.add(start, 1, 1);
Atomics.notify(start, 1);
Atomics.wait(start, 0, 0);
let best = 0;
let sink = 0;
for (let r = 0; r < reps; r++) {
  const t0 = performance.now();
  sink += run(iterations);
  const s = (performance.now() - t0) / 1e3;
  best = Math.max(best, (iterations * flops) / s / 1e9);
}
parentPort.postMessage({ gflops: best, sink });
`;

export interface FmaPeak {
  /** Sum over the threads of each one's best rate, GFLOP/s. */
  readonly gflops: number;
  /** Each thread's best rate, GFLOP/s. */
  readonly perThread: readonly number[];
  readonly relaxed: boolean;
}

/**
 * Measures the peak with `threads` threads running at once; each run of the loop is `iterations`
 * iterations (default 2e6: ~30 ms at 60 GFLOP/s), the best of `reps` (default 5) per thread.
 */
export async function measureFmaPeak(
  module: { bytes: Uint8Array; relaxed: boolean },
  threads: number,
  options: { iterations?: number; reps?: number } = {},
): Promise<FmaPeak> {
  const flag = new SharedArrayBuffer(8);
  const state = new Int32Array(flag);
  const data = {
    bytes: module.bytes,
    iterations: options.iterations ?? 2_000_000,
    reps: options.reps ?? 5,
    flag,
    flops: FLOPS_PER_ITERATION,
  };
  const workers = Array.from({ length: threads }, () => new Worker(WORKER, { eval: true, workerData: data }));
  try {
    const answers = workers.map(
      (w) =>
        new Promise<number>((resolve, reject) => {
          w.once('message', (m: { gflops: number }) => resolve(m.gflops));
          w.once('error', reject);
          w.once('exit', (code) => reject(new Error(`wasm-fma-peak: a worker exited (${code}) early`)));
        }),
    );
    // Start them together once every one is compiled and waiting.
    while (Atomics.load(state, 1) < threads) await new Promise((r) => setTimeout(r, 5));
    Atomics.store(state, 0, 1);
    Atomics.notify(state, 0);
    const perThread = await Promise.all(answers);
    return { gflops: perThread.reduce((a, b) => a + b, 0), perThread, relaxed: module.relaxed };
  } finally {
    for (const w of workers) {
      w.removeAllListeners('exit');
      await w.terminate();
    }
  }
}
