/**
 * The interface of the MLP kernels, identical on every backend (the WebAssembly CPU kernels and the
 * WGSL kernels): export names, binding order, constant layout and workload. Only the workgroup counts
 * differ per backend (see `cpu/descriptors.ts` and `webgpu/descriptors.ts`).
 *
 * All tensors are f32, row-major, densely packed; labels are u32. Constants are 32-bit words; f32
 * constants travel as their bit pattern (`f32Bits`). Workloads name what the caller knows; every kernel
 * handles any workgroup count (a workgroup's share is derived from the count it is dispatched with).
 *
 * | export             | bindings                               | constants                          | workload |
 * | ------------------ | -------------------------------------- | ---------------------------------- | -------- |
 * | `matmul`           | A, B, C                                 | M, N, K, flags, alpha, beta         | [N, M]   |
 * | `linear`           | A, B, bias, C                           | M, N, K, flags, alpha, beta         | [N, M]   |
 * | `matmul_relu_grad` | A, B, H, C                              | M, N, K, flags, alpha, beta         | [N, M]   |
 * | `bias_add`         | bias, Y (in place)                      | rows, cols                          | [rows·cols] |
 * | `relu`             | X, Y                                    | count                               | [count]  |
 * | `relu_grad`        | dY, H, dX                               | count                               | [count]  |
 * | `softmax_ce`       | logits, labels (u32), dLogits, rowLoss  | rows, classes                       | [rows]   |
 * | `loss_mean`        | rowLoss, loss (1 element)               | rows                                | [rows]   |
 * | `colsum`           | X, out                                  | rows, cols                          | [cols]   |
 * | `sgd`              | grad, param (in place)                  | count, lr                           | [count]  |
 * | `bias_grad_sgd`    | dY, bias (in place)                     | rows, cols, lr                      | [cols]   |
 * | `matmul_bias_grad` | A, B, C, D                              | M, N, K, flags, alpha, beta         | [N, M]   |
 * | `softmax_ce_loss`  | logits, labels (u32), dLogits, loss     | rows, classes                       | [rows]   |
 *
 * Semantics (`op(A)` is `[M × K]`: A stored `[K × M]` when flags has TRANS_A, else `[M × K]`; `op(B)` is
 * `[K × N]`: B stored `[N × K]` with TRANS_B, else `[K × N]`; C is `[M × N]`):
 * - matmul:           C = alpha · op(A)·op(B) + beta · C (C is not read when beta is 0)
 * - linear:           C = alpha · op(A)·op(B) + beta · C + bias (broadcast over rows), then ReLU if flags has RELU
 * - matmul_relu_grad: C = (alpha · op(A)·op(B) + beta · C) · [H > 0] (H is `[M × N]`: the ReLU output)
 * - bias_add:         Y[r, c] += bias[c]
 * - relu:             Y = max(X, 0)
 * - relu_grad:        dX = dY · [H > 0]
 * - softmax_ce:       rowLoss[r] = -log softmax(logits[r])[labels[r]];
 *                     dLogits[r] = (softmax(logits[r]) - onehot(labels[r])) / rows  (gradient of the mean)
 * - loss_mean:        loss[0] = Σ rowLoss / rows
 * - colsum:           out[c] = Σ_r X[r, c]
 * - sgd:              param -= lr · grad
 * - bias_grad_sgd:    bias[c] -= lr · Σ_r dY[r, c]
 * - matmul_bias_grad: C = alpha · op(A)·op(B) + beta · C and D[c] = alpha · Σ_k op(B)[k, c] + beta · D[c]
 *                     (D is `[N]`: as if op(A) had a row of ones and C that row, stored in D). With
 *                     A = X (TRANS_A), B = dY, alpha = -lr, beta = 1 it is the SGD update of a layer's
 *                     weights C and bias D in one dispatch (the bias gradient folded into the GEMM).
 * - softmax_ce_loss:  softmax_ce's dLogits, and loss[0] = Σ rowLoss / rows (softmax_ce and loss_mean in
 *                     one dispatch; the row losses are not stored). A label ≥ classes gives a NaN loss on
 *                     WebGPU and throws on the CPU, as softmax_ce.
 *
 * Aliasing: outputs must not overlap inputs except where "in place" says so (WebGPU forbids aliased
 * writable bindings; the CPU GEMM reads A and B while writing C).
 */
import { constants } from '@keel/hal';

export const MatmulFlags = Object.freeze({
  TRANS_A: 1,
  TRANS_B: 2,
  /** `linear` only: apply ReLU after the bias. */
  RELU: 4,
} as const);

export const MLP_KERNEL_NAMES = Object.freeze([
  'matmul',
  'linear',
  'matmul_relu_grad',
  'bias_add',
  'relu',
  'relu_grad',
  'softmax_ce',
  'loss_mean',
  'colsum',
  'sgd',
  'bias_grad_sgd',
  'matmul_bias_grad',
  'softmax_ce_loss',
] as const);

export type MlpKernelName = (typeof MLP_KERNEL_NAMES)[number];

/** Binding and constant counts per export (the same on every backend). */
export const MLP_KERNEL_SIGNATURES: Readonly<
  Record<MlpKernelName, { readonly bindingCount: number; readonly constantCount: number }>
> = Object.freeze({
  matmul: { bindingCount: 3, constantCount: 6 },
  linear: { bindingCount: 4, constantCount: 6 },
  matmul_relu_grad: { bindingCount: 4, constantCount: 6 },
  bias_add: { bindingCount: 2, constantCount: 2 },
  relu: { bindingCount: 2, constantCount: 1 },
  relu_grad: { bindingCount: 3, constantCount: 1 },
  softmax_ce: { bindingCount: 4, constantCount: 2 },
  loss_mean: { bindingCount: 2, constantCount: 1 },
  colsum: { bindingCount: 2, constantCount: 2 },
  sgd: { bindingCount: 2, constantCount: 2 },
  bias_grad_sgd: { bindingCount: 2, constantCount: 3 },
  matmul_bias_grad: { bindingCount: 4, constantCount: 6 },
  softmax_ce_loss: { bindingCount: 4, constantCount: 2 },
});

const bitsView = new DataView(new ArrayBuffer(4));

/**
 * The bit pattern of `x` rounded to f32, as a u32 constant: `constants.f32` of `@keel/hal` (kept here
 * for the MLP exports; new code uses `constants.f32` or `packConstants`).
 */
export function f32Bits(x: number): number {
  return constants.f32(x);
}

/** The f32 value of a u32 bit pattern. */
export function bitsToF32(bits: number): number {
  bitsView.setUint32(0, bits >>> 0, true);
  return bitsView.getFloat32(0, true);
}

export interface MatmulParams {
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly transA?: boolean;
  readonly transB?: boolean;
  /** `linear` only. */
  readonly relu?: boolean;
  /** Default 1. */
  readonly alpha?: number;
  /** Default 0. */
  readonly beta?: number;
}

/** The 6 constants of the matmul family: [M, N, K, flags, alpha bits, beta bits]. */
export function matmulConstants(p: MatmulParams): Uint32Array {
  for (const [name, v] of [
    ['m', p.m],
    ['n', p.n],
    ['k', p.k],
  ] as const) {
    if (!Number.isInteger(v) || v < 0 || v > 0x7fff_ffff) {
      throw new RangeError(`matmul constants: ${name} must be a non-negative 31-bit integer, got ${v}`);
    }
  }
  const flags =
    (p.transA ? MatmulFlags.TRANS_A : 0) |
    (p.transB ? MatmulFlags.TRANS_B : 0) |
    (p.relu ? MatmulFlags.RELU : 0);
  return Uint32Array.of(p.m, p.n, p.k, flags, f32Bits(p.alpha ?? 1), f32Bits(p.beta ?? 0));
}
