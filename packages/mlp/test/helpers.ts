/**
 * Test helpers for the MLP kernels: the compiled GEMM module, an arena of device-like memory (a plain
 * SharedArrayBuffer, or a shared WebAssembly.Memory exposed through the zero-copy extension's
 * `binding.memory`: kernel-context.ts), and
 * a dispatcher that runs a CPU kernel over every workgroup like the CPU device does.
 */
import { compileGemmWasm } from '../scripts/mlp-wasm';
import type {
  LocalMemory,
  MlpCpuKernel,
  WasmMemoryBinding,
  WasmMemoryContext,
} from '../src/cpu/kernel-context';
import { Prng } from '../src/prng';
import * as ref from '../src/reference';

let compiled: Promise<WebAssembly.Module> | undefined;

/** The GEMM module as the package build makes it (compiled once per test file). */
export function gemmModule(): Promise<WebAssembly.Module> {
  compiled ??= compileGemmWasm().then(({ bytes }) => WebAssembly.compile(bytes));
  return compiled;
}

export function randomArray(prng: Prng, length: number, lo = -1, hi = 1): Float32Array<ArrayBuffer> {
  const out = new Float32Array(length);
  for (let i = 0; i < length; i++) out[i] = prng.uniform(lo, hi);
  return out;
}

export function randomLabels(prng: Prng, length: number, classes: number): Uint32Array<ArrayBuffer> {
  const out = new Uint32Array(length);
  for (let i = 0; i < length; i++) out[i] = prng.nextInt(classes);
  return out;
}

/** Largest |a - b| relative to max(1, |b|). */
export function maxRelativeError(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`length ${a.length} ≠ ${b.length}`);
  let worst = 0;
  for (let i = 0; i < a.length; i++) {
    const err = Math.abs(a[i]! - b[i]!) / Math.max(1, Math.abs(b[i]!));
    if (!(err <= worst)) worst = Number.isNaN(err) ? Infinity : err;
  }
  return worst;
}

/** Device-like memory: bindings are 64-byte aligned ranges of one buffer. */
export class Arena {
  readonly memory: WebAssembly.Memory | undefined;
  readonly buffer: SharedArrayBuffer;
  private next = 64; // offset 0 stays unused so a zero pointer never aliases a binding
  /** Per-worker scratch at the end of the arena (zero-copy path). */
  readonly localMemory: LocalMemory | undefined;

  /**
   * @param bytes capacity
   * @param wasm back the arena with a shared WebAssembly.Memory and expose it as `binding.memory`,
   *   with `localMemoryBytes` of scratch reserved at its end
   */
  constructor(bytes: number, wasm = false, localMemoryBytes = 0) {
    const total = bytes + localMemoryBytes + 64;
    if (wasm) {
      const pages = Math.ceil(total / 65536);
      this.memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
      this.buffer = this.memory.buffer as unknown as SharedArrayBuffer;
      this.localMemory =
        localMemoryBytes > 0 ? { byteOffset: (bytes + 63) & ~63, byteLength: localMemoryBytes } : undefined;
    } else {
      this.memory = undefined;
      this.buffer = new SharedArrayBuffer(total);
      this.localMemory = undefined;
    }
  }

  /** A binding of `bytes` bytes (zeroed), or holding a copy of `data`. */
  binding(data: Float32Array | Uint32Array | number): WasmMemoryBinding {
    const bytes = typeof data === 'number' ? data : data.byteLength;
    const byteOffset = this.next;
    this.next = (this.next + bytes + 63) & ~63;
    const limit = this.localMemory?.byteOffset ?? this.buffer.byteLength;
    if (this.next > limit) throw new Error(`arena: out of memory (${this.next} > ${limit})`);
    const buffer = this.buffer;
    const f32 = new Float32Array(buffer, byteOffset, bytes >> 2);
    const u32 = new Uint32Array(buffer, byteOffset, bytes >> 2);
    if (typeof data !== 'number')
      new Uint8Array(buffer, byteOffset, bytes).set(new Uint8Array(data.buffer, data.byteOffset, bytes));
    else f32.fill(0);
    return {
      buffer,
      byteOffset,
      byteLength: bytes,
      u8: new Uint8Array(buffer, byteOffset, bytes),
      i32: new Int32Array(buffer, byteOffset, bytes >> 2),
      u32,
      f32,
      f64: new Float64Array(buffer, byteOffset, bytes >> 3),
      view: new DataView(buffer, byteOffset, bytes),
      memory: this.memory,
    };
  }
}

/**
 * Runs `kernel` over every workgroup of `count` (in a shuffled order, as workers would claim them),
 * with `constants` and `bindings`, like the CPU device's executor.
 */
export function dispatch(
  kernel: MlpCpuKernel,
  count: readonly [number, number, number],
  bindings: readonly WasmMemoryBinding[],
  constants: Uint32Array,
  localMemory?: LocalMemory,
  seed = 7,
): void {
  const total = count[0] * count[1] * count[2];
  const order = Array.from({ length: total }, (_, i) => i);
  const prng = new Prng(seed);
  for (let i = total - 1; i > 0; i--) {
    const j = prng.nextInt(i + 1);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const workgroupId: [number, number, number] = [0, 0, 0];
  const ctx: WasmMemoryContext = {
    workgroupId,
    workgroupCount: count,
    workgroupSize: [1, 1, 1],
    bindings,
    constants,
    constantsF32: new Float32Array(constants.buffer, constants.byteOffset, constants.length),
    workerIndex: 0,
    localMemory,
  };
  for (const item of order) {
    workgroupId[0] = item % count[0];
    workgroupId[1] = Math.floor(item / count[0]) % count[1];
    workgroupId[2] = Math.floor(item / (count[0] * count[1]));
    kernel(ctx);
  }
}

/** The GEMM kernels of the MLP, as the kernel tests walk them. */
export const GEMM_KINDS = ['matmul', 'linear', 'matmul_relu_grad', 'matmul_bias_grad'] as const;
export type GemmKind = (typeof GEMM_KINDS)[number];

/** Whether `kind` reads C (beta) the way the weight updates do: `matmul` and `matmul_bias_grad`. */
export const gemmUpdates = (kind: GemmKind): boolean => kind === 'matmul' || kind === 'matmul_bias_grad';

/**
 * The bindings of a `kind` dispatch in the kernel's order: [A, B, C] (matmul), [A, B, extra, C]
 * (linear, matmul_relu_grad), [A, B, C, D] (matmul_bias_grad, `extra` being D).
 */
export function gemmBindings<T>(kind: GemmKind, a: T, b: T, c: T, extra: T): T[] {
  if (kind === 'matmul') return [a, b, c];
  return kind === 'matmul_bias_grad' ? [a, b, c, extra] : [a, b, extra, c];
}

/** Every (transA, transB) pair. */
export const TRANSPOSES = [
  [false, false],
  [true, false],
  [false, true],
  [true, true],
] as const;

/** One GEMM kernel case: random operands (drawn in this order: a, b, c0, extra) and the expected C. */
export interface GemmCase {
  readonly a: Float32Array<ArrayBuffer>;
  readonly b: Float32Array<ArrayBuffer>;
  /** C before the kernel (read when beta ≠ 0). */
  readonly c0: Float32Array<ArrayBuffer>;
  /**
   * The bias (`linear`, n values), the ReLU mask's activations (`matmul_relu_grad`, m·n values) or D
   * before the kernel (`matmul_bias_grad`, n values).
   */
  readonly extra: Float32Array<ArrayBuffer>;
  /** The plain-JS reference result, in float64. */
  readonly want: Float64Array;
  /** `matmul_bias_grad`: D's reference result, alpha · Σ_k op(B)[k, c] + beta · D[c] (else empty). */
  readonly wantD: Float64Array;
}

export function gemmCase(
  prng: Prng,
  kind: GemmKind,
  s: {
    readonly m: number;
    readonly n: number;
    readonly k: number;
    readonly transA: boolean;
    readonly transB: boolean;
    readonly relu: boolean;
    readonly alpha: number;
    readonly beta: number;
  },
): GemmCase {
  const { m, n, k } = s;
  const a = randomArray(prng, m * k);
  const b = randomArray(prng, k * n);
  const c0 = randomArray(prng, m * n);
  const extra = randomArray(prng, kind === 'linear' || kind === 'matmul_bias_grad' ? n : m * n);
  const want = Float64Array.from(c0);
  ref.matmul(a, b, want, m, n, k, {
    transA: s.transA,
    transB: s.transB,
    alpha: Math.fround(s.alpha),
    beta: Math.fround(s.beta),
  });
  if (kind === 'linear') ref.biasAdd(want, extra, m, n);
  if (s.relu) ref.relu(want, want);
  if (kind === 'matmul_relu_grad') ref.reluGrad(want, extra, want);
  const wantD = new Float64Array(kind === 'matmul_bias_grad' ? n : 0);
  for (let c = 0; c < wantD.length; c++) {
    let sum = 0;
    for (let i = 0; i < k; i++) sum += b[s.transB ? c * k + i : i * n + c]!;
    wantD[c] = Math.fround(s.alpha) * sum + Math.fround(s.beta) * extra[c]!;
  }
  return { a, b, c0, extra, want, wantD };
}
