/**
 * The plain-JS reference of the MLP kernels and of one training step. It is the specification every
 * Keel kernel (WebAssembly, WGSL) is tested against: readable loops, accumulation in f64, storage in the
 * array type the caller passes (f32 for comparisons with kernels, f64 for finite-difference checks).
 *
 * Matrix conventions: row-major; `op(A)` is `[M × K]`, `op(B)` is `[K × N]`, `C` is `[M × N]`; with
 * `transA` the stored A is `[K × M]`, with `transB` the stored B is `[N × K]`.
 */
import type { MlpConfig } from './model';

export type Floats = Float32Array | Float64Array;

export interface Params<T extends Floats = Floats> {
  readonly weights: T[];
  readonly biases: T[];
}

export interface MatmulOptions {
  readonly transA?: boolean;
  readonly transB?: boolean;
  /** Scale of the product (default 1). */
  readonly alpha?: number;
  /** Scale of the previous C (default 0: C is not read). */
  readonly beta?: number;
}

/** `C = alpha · op(A) · op(B) + beta · C`. */
export function matmul(
  a: Floats,
  b: Floats,
  c: Floats,
  m: number,
  n: number,
  k: number,
  { transA = false, transB = false, alpha = 1, beta = 0 }: MatmulOptions = {},
): void {
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let sum = 0;
      for (let p = 0; p < k; p++) {
        const av = transA ? a[p * m + i]! : a[i * k + p]!;
        const bv = transB ? b[j * k + p]! : b[p * n + j]!;
        sum += av * bv;
      }
      c[i * n + j] = alpha * sum + (beta === 0 ? 0 : beta * c[i * n + j]!);
    }
  }
}

/** `Y[m, n] += bias[n]` for `Y` `[M × N]`. */
export function biasAdd(y: Floats, bias: Floats, m: number, n: number): void {
  for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) y[i * n + j] = y[i * n + j]! + bias[j]!;
}

/** `y = max(x, 0)` elementwise (y may be x). */
export function relu(x: Floats, y: Floats): void {
  for (let i = 0; i < x.length; i++) y[i] = Math.max(x[i]!, 0);
}

/** `dx = dy · [h > 0]` elementwise, `h` being the ReLU output (or its input: same sign test). */
export function reluGrad(dy: Floats, h: Floats, dx: Floats): void {
  for (let i = 0; i < dy.length; i++) dx[i] = h[i]! > 0 ? dy[i]! : 0;
}

/**
 * Softmax cross-entropy over `[rows × classes]` logits with integer labels. Writes the per-row loss
 * `-log softmax(z)[label]` to `rowLoss` and the gradient of the MEAN loss w.r.t. the logits,
 * `(softmax(z) - onehot(label)) / rows`, to `dLogits`; returns the mean loss.
 */
export function softmaxCrossEntropy(
  logits: Floats,
  labels: Uint32Array,
  rows: number,
  classes: number,
  dLogits: Floats,
  rowLoss: Floats,
): number {
  let total = 0;
  for (let r = 0; r < rows; r++) {
    const base = r * classes;
    let max = -Infinity;
    for (let c = 0; c < classes; c++) max = Math.max(max, logits[base + c]!);
    let sum = 0;
    for (let c = 0; c < classes; c++) sum += Math.exp(logits[base + c]! - max);
    const label = labels[r]!;
    const loss = Math.log(sum) - (logits[base + label]! - max);
    rowLoss[r] = loss;
    total += loss;
    for (let c = 0; c < classes; c++) {
      const p = Math.exp(logits[base + c]! - max) / sum;
      dLogits[base + c] = (p - (c === label ? 1 : 0)) / rows;
    }
  }
  return total / rows;
}

/** `out[n] = Σ_m x[m, n]` for `x` `[M × N]`. */
export function colsum(x: Floats, m: number, n: number, out: Floats): void {
  for (let j = 0; j < n; j++) {
    let sum = 0;
    for (let i = 0; i < m; i++) sum += x[i * n + j]!;
    out[j] = sum;
  }
}

/** `param -= lr · grad`. */
export function sgd(param: Floats, grad: Floats, lr: number): void {
  for (let i = 0; i < param.length; i++) param[i] = param[i]! - lr * grad[i]!;
}

/** Sum of all elements (f64). */
export function sum(x: Floats): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i]!;
  return s;
}

type FloatsConstructor<T extends Floats> = new (length: number) => T;

/** What the forward pass keeps for the backward pass. */
export interface ForwardResult<T extends Floats> {
  /** `activations[0]` is the input; `activations[i]` the output of layer i (post-ReLU for hidden layers, logits last). */
  readonly activations: T[];
  readonly loss: number;
  readonly dLogits: T;
  readonly rowLoss: T;
}

/** The forward pass and the loss of a batch. */
export function forward<T extends Floats>(
  config: MlpConfig,
  params: Params<T>,
  x: T,
  labels: Uint32Array,
  make: FloatsConstructor<T>,
): ForwardResult<T> {
  const layers = config.layers;
  const rows = labels.length;
  const activations: T[] = [x];
  for (let i = 0; i < layers.length - 1; i++) {
    const y = new make(rows * layers[i + 1]!);
    matmul(activations[i]!, params.weights[i]!, y, rows, layers[i + 1]!, layers[i]!);
    biasAdd(y, params.biases[i]!, rows, layers[i + 1]!);
    if (i < layers.length - 2) relu(y, y);
    activations.push(y);
  }
  const classes = layers[layers.length - 1]!;
  const dLogits = new make(rows * classes);
  const rowLoss = new make(rows);
  const loss = softmaxCrossEntropy(activations[layers.length - 1]!, labels, rows, classes, dLogits, rowLoss);
  return { activations, loss, dLogits, rowLoss };
}

/** Gradients of the mean loss w.r.t. every parameter, from a forward result. */
export function backward<T extends Floats>(
  config: MlpConfig,
  params: Params<T>,
  fwd: ForwardResult<T>,
  make: FloatsConstructor<T>,
): Params<T> {
  const layers = config.layers;
  const rows = fwd.rowLoss.length;
  const count = layers.length - 1;
  const weights: T[] = new Array<T>(count);
  const biases: T[] = new Array<T>(count);
  let dy = fwd.dLogits;
  for (let i = count - 1; i >= 0; i--) {
    const fanIn = layers[i]!;
    const fanOut = layers[i + 1]!;
    const dw = new make(fanIn * fanOut);
    matmul(fwd.activations[i]!, dy, dw, fanIn, fanOut, rows, { transA: true });
    const db = new make(fanOut);
    colsum(dy, rows, fanOut, db);
    weights[i] = dw;
    biases[i] = db;
    if (i > 0) {
      const dx = new make(rows * fanIn);
      matmul(dy, params.weights[i]!, dx, rows, fanIn, fanOut, { transB: true });
      reluGrad(dx, fwd.activations[i]!, dx);
      dy = dx;
    }
  }
  return { weights, biases };
}

/** One SGD training step in place; returns the batch's mean loss (before the update). */
export function trainStep<T extends Floats>(
  config: MlpConfig,
  params: Params<T>,
  x: T,
  labels: Uint32Array,
  make: FloatsConstructor<T>,
): number {
  const fwd = forward(config, params, x, labels, make);
  const grads = backward(config, params, fwd, make);
  for (let i = 0; i < params.weights.length; i++) {
    sgd(params.weights[i]!, grads.weights[i]!, config.learningRate);
    sgd(params.biases[i]!, grads.biases[i]!, config.learningRate);
  }
  return fwd.loss;
}
