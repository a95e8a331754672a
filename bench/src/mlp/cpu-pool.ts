/**
 * A minimal stand-in for the CPU device's task mode, to measure the MLP's CPU kernels on all cores
 * before (and independently of) the device integration: worker threads load the built kernel module by
 * URL, claim the workgroups of a step program's dispatches through one atomic counter, and meet at a
 * barrier between stages; the main thread only writes the batch, starts the step and waits.
 *
 * Memory is one SharedArrayBuffer (the device's situation today: kernels copy their GEMM tiles) or one
 * shared WebAssembly.Memory exposed as `binding.memory` with a per-worker `localMemory` (the proposed
 * ABI addition: zero-copy GEMM).
 */
import { Worker } from 'node:worker_threads';
import {
  GEMM_SCRATCH_BYTES,
  MLP_CPU_EXPORTS,
  MLP_CPU_MODULE_URL,
  type MlpKernelName,
  type StepProgram,
} from './keel-mlp.ts';

const GEN = 0;
const CLAIM = 1;
const DONE = 2;
const EXIT = 3;

interface WireDispatch {
  readonly kernel: MlpKernelName;
  readonly bindings: readonly { readonly offset: number; readonly bytes: number }[];
  readonly constants: readonly number[];
  readonly count: readonly [number, number, number];
}

interface WireProgram {
  readonly dispatches: readonly WireDispatch[];
  /** itemStarts[i]: first item of dispatch i; itemStarts[n] = total. */
  readonly itemStarts: readonly number[];
  /** Item index where each stage ends. */
  readonly stageEnds: readonly number[];
  readonly total: number;
}

const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
(async () => {
  const mod = await import(workerData.moduleUrl);
  const { program, workerIndex, localMemory, memory } = workerData;
  const buffer = memory !== undefined ? memory.buffer : workerData.buffer;
  const ctl = new Int32Array(workerData.control);
  const runs = program.dispatches.map((d) => {
    const fn = mod[d.kernel];
    if (typeof fn !== 'function') throw new Error('no kernel ' + d.kernel);
    const bindings = d.bindings.map((b) => ({
      buffer, byteOffset: b.offset, byteLength: b.bytes,
      f32: new Float32Array(buffer, b.offset, b.bytes >> 2),
      u32: new Uint32Array(buffer, b.offset, b.bytes >> 2),
      memory,
    }));
    const constants = Uint32Array.from(d.constants);
    const ctx = {
      workgroupId: [0, 0, 0], workgroupCount: d.count, workgroupSize: [1, 1, 1], bindings, constants,
      constantsF32: new Float32Array(constants.buffer), workerIndex, localMemory,
    };
    return { fn, ctx, cx: d.count[0], cy: d.count[1] };
  });
  const starts = program.itemStarts;
  const ends = program.stageEnds;
  const total = program.total;
  parentPort.postMessage('ready');
  let gen = 0;
  let held = -1;
  for (;;) {
    while (Atomics.load(ctl, ${GEN}) === gen) Atomics.wait(ctl, ${GEN}, gen, 50);
    if (Atomics.load(ctl, ${EXIT}) !== 0) return;
    gen++;
    const base = (gen - 1) * total;
    let d = 0;
    for (let s = 0; s < ends.length; s++) {
      const end = ends[s];
      for (;;) {
        if (held < 0) held = Atomics.add(ctl, ${CLAIM}, 1) - base;
        if (held >= end) break;
        while (starts[d + 1] <= held) d++;
        const r = runs[d];
        const item = held - starts[d];
        const id = r.ctx.workgroupId;
        id[0] = item % r.cx;
        const rest = (item / r.cx) | 0;
        id[1] = rest % r.cy;
        id[2] = (rest / r.cy) | 0;
        r.fn(r.ctx);
        held = -1;
        if (Atomics.add(ctl, ${DONE}, 1) + 1 === base + total) Atomics.notify(ctl, ${DONE});
      }
      let spins = 0;
      for (;;) {
        const done = Atomics.load(ctl, ${DONE});
        if (done - base >= end) break;
        if (++spins > 4000) Atomics.wait(ctl, ${DONE}, done, 0.05);
      }
    }
    held -= total;
  }
})().catch((e) => { parentPort.postMessage({ error: String(e && e.stack || e) }); });
`;

export interface CpuPoolOptions {
  readonly workers: number;
  /** Back memory with a shared WebAssembly.Memory and give kernels `binding.memory` + `localMemory`. */
  readonly zeroCopy: boolean;
  /** Overrides the matmul family's default tile (rows × columns of C per workgroup), for tuning. */
  readonly matmulTile?: { readonly rows: number; readonly cols: number };
}

/** A pool running one step program; buffers are views of its memory by name. */
export class CpuStepPool {
  readonly views: ReadonlyMap<string, { readonly f32: Float32Array; readonly u32: Uint32Array }>;
  private readonly control = new Int32Array(new SharedArrayBuffer(64));
  private readonly workers: Worker[] = [];
  private readonly total: number;
  private generation = 0;

  private constructor(
    program: StepProgram,
    private readonly options: CpuPoolOptions,
  ) {
    const layout = new Map<string, { offset: number; bytes: number }>();
    let at = 64;
    for (const b of program.buffers) {
      layout.set(b.name, { offset: at, bytes: b.bytes });
      at = (at + b.bytes + 63) & ~63;
    }
    const localBase = at;
    const bytes = at + (options.zeroCopy ? options.workers * GEMM_SCRATCH_BYTES : 0);
    let memory: WebAssembly.Memory | undefined;
    let buffer: SharedArrayBuffer;
    if (options.zeroCopy) {
      const pages = Math.ceil(bytes / 65536);
      memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
      buffer = memory.buffer as unknown as SharedArrayBuffer;
    } else {
      buffer = new SharedArrayBuffer(bytes);
    }
    this.views = new Map(
      [...layout].map(([name, { offset, bytes: n }]) => [
        name,
        { f32: new Float32Array(buffer, offset, n >> 2), u32: new Uint32Array(buffer, offset, n >> 2) },
      ]),
    );
    const dispatches: WireDispatch[] = [];
    const itemStarts: number[] = [0];
    const stageEnds: number[] = [];
    for (const stage of program.stages) {
      for (const d of stage) {
        const descriptor = MLP_CPU_EXPORTS.find((e) => e.name === d.kernel)!;
        const tile = options.matmulTile;
        const c =
          tile !== undefined &&
          (d.kernel === 'matmul' || d.kernel === 'linear' || d.kernel === 'matmul_relu_grad')
            ? [Math.ceil(d.workload[0]! / tile.cols), Math.ceil(d.workload[1]! / tile.rows), 1]
            : descriptor.workgroupCount!(d.workload);
        dispatches.push({
          kernel: d.kernel,
          bindings: d.bindings.map((name) => layout.get(name)!),
          constants: Array.from(d.constants),
          count: [c[0], c[1], c[2]],
        });
        itemStarts.push(itemStarts[itemStarts.length - 1]! + c[0] * c[1] * c[2]);
      }
      stageEnds.push(itemStarts[itemStarts.length - 1]!);
    }
    this.total = itemStarts[itemStarts.length - 1]!;
    const wire: WireProgram = { dispatches, itemStarts, stageEnds, total: this.total };
    for (let w = 0; w < options.workers; w++) {
      this.workers.push(
        new Worker(WORKER_SOURCE, {
          eval: true,
          workerData: {
            moduleUrl: MLP_CPU_MODULE_URL.href,
            program: wire,
            workerIndex: w,
            control: this.control.buffer,
            memory,
            buffer: memory === undefined ? buffer : undefined,
            localMemory: options.zeroCopy
              ? { byteOffset: localBase + w * GEMM_SCRATCH_BYTES, byteLength: GEMM_SCRATCH_BYTES }
              : undefined,
          },
        }),
      );
    }
  }

  /** Starts the workers and resolves once each loaded the kernel module. */
  static async create(program: StepProgram, options: CpuPoolOptions): Promise<CpuStepPool> {
    const pool = new CpuStepPool(program, options);
    await Promise.all(
      pool.workers.map(
        (w) =>
          new Promise<void>((resolve, reject) => {
            w.once('message', (m: unknown) =>
              m === 'ready' ? resolve() : reject(new Error(`cpu pool worker: ${JSON.stringify(m)}`)),
            );
            w.once('error', reject);
          }),
      ),
    );
    for (const w of pool.workers) {
      w.on('message', (m: unknown) => {
        process.stderr.write(`cpu pool worker failed: ${JSON.stringify(m)}\n`);
        process.exit(1);
      });
    }
    return pool;
  }

  get zeroCopy(): boolean {
    return this.options.zeroCopy;
  }

  /** Runs one step (blocking the calling thread until the workers finish). */
  runStep(): void {
    this.generation++;
    Atomics.add(this.control, GEN, 1);
    Atomics.notify(this.control, GEN);
    const target = this.generation * this.total;
    for (;;) {
      const done = Atomics.load(this.control, DONE);
      if (done >= target) return;
      Atomics.wait(this.control, DONE, done, 100);
    }
  }

  async destroy(): Promise<void> {
    Atomics.store(this.control, EXIT, 1);
    Atomics.add(this.control, GEN, 1);
    Atomics.notify(this.control, GEN);
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
