/**
 * The TensorFlow.js side of the `mlp` benchmark: trains the reference MLP exactly as Keel does (same
 * shapes, batch, data set, initial weights, learning rate; loss read back every step with
 * `await loss.data()`) on a TF.js backend, with the idiomatic TF.js loop: variables,
 * `tf.train.sgd(lr).minimize(f, true)`, `tf.losses.softmaxCrossEntropy` (mean over the batch).
 *
 * Backends: 'cpu' (plain JS), 'wasm' (@tensorflow/tfjs-backend-wasm: XNNPACK SIMD kernels; in Node it
 * runs single-threaded, TF.js disables its threaded build there), 'webgpu'
 * (@tensorflow/tfjs-backend-webgpu on the `webgpu` package's Dawn adapter, `navigator.gpu` set before
 * the backend loads). Each run selects its backend; steps run on pre-generated batches (data generation
 * is not timed; uploading each batch is, as it is for Keel).
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import type * as TF from '@tensorflow/tfjs';
import { median } from '../harness.ts';
import {
  type Batch,
  initParams,
  type MlpConfig,
  oneHot,
  REFERENCE_DATASET,
  REFERENCE_MLP,
  SyntheticDataset,
} from './keel-mlp.ts';

export type TfjsBackend = 'cpu' | 'wasm' | 'webgpu';

export interface TfjsRunOptions {
  readonly config?: MlpConfig;
  /** Timed steps (the median is reported). */
  readonly steps?: number;
  /** Untimed steps first (JIT, kernel compilation, pipeline caches). */
  readonly warmup?: number;
  /** Distinct batches cycled through (generated up front). */
  readonly batches?: number;
}

export interface TfjsRunResult {
  readonly backend: TfjsBackend;
  /** Median wall time of one step (upload, forward, backward, update, loss read back). */
  readonly msPerStep: number;
  /** Every timed step's wall time, in order. */
  readonly stepMs: number[];
  /** Every step's loss, warm-up included, in order. */
  readonly losses: number[];
  /** Adapter description for 'webgpu'. */
  readonly adapter?: string;
}

let tfPromise: Promise<typeof TF> | undefined;
let gpuAdapterInfo: string | undefined;

async function loadTf(): Promise<typeof TF> {
  tfPromise ??= import('@tensorflow/tfjs');
  return tfPromise;
}

/** Registers the backend's package (once) and makes it current; throws if it cannot initialise. */
async function selectBackend(tf: typeof TF, backend: TfjsBackend): Promise<void> {
  if (backend === 'wasm' && tf.findBackendFactory('wasm') === null) {
    const wasm = await import('@tensorflow/tfjs-backend-wasm');
    const require = createRequire(import.meta.url);
    const dist = path.join(
      path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/package.json')),
      'dist',
    );
    wasm.setWasmPaths(`${dist}${path.sep}`);
  }
  if (backend === 'webgpu' && tf.findBackendFactory('webgpu') === null) {
    const { create, globals } = await import('webgpu');
    Object.assign(globalThis, globals);
    const gpu = create([]);
    const g = globalThis as { navigator?: { gpu?: unknown } };
    if (g.navigator === undefined)
      Object.defineProperty(globalThis, 'navigator', { value: { gpu }, configurable: true });
    else if (g.navigator.gpu === undefined)
      Object.defineProperty(g.navigator, 'gpu', { value: gpu, configurable: true });
    const adapter = await (gpu as GPU).requestAdapter();
    if (adapter === null) throw new Error('webgpu: no adapter');
    const info = adapter.info;
    gpuAdapterInfo = [info.vendor, info.architecture, info.device, info.description]
      .filter((s) => s)
      .join(' ');
    await import('@tensorflow/tfjs-backend-webgpu');
  }
  if (!(await tf.setBackend(backend))) throw new Error(`tfjs: backend '${backend}' failed to initialise`);
  await tf.ready();
}

/** Trains `steps` + `warmup` steps of the MLP on `backend` and returns the median ms/step. */
export async function runTfjsMlp(backend: TfjsBackend, options: TfjsRunOptions = {}): Promise<TfjsRunResult> {
  const config = options.config ?? REFERENCE_MLP;
  const steps = options.steps ?? 10;
  const warmup = options.warmup ?? 3;
  const d = config.layers;
  const L = d.length - 1;
  const B = config.batch;
  const classes = d[L]!;
  const data = new SyntheticDataset({ ...REFERENCE_DATASET, inputSize: d[0]!, classes });
  const batches: (Batch & { readonly targets: Float32Array })[] = [];
  for (let i = 0; i < (options.batches ?? 8); i++) {
    const b = data.batch(i, B);
    batches.push({ ...b, targets: oneHot(b.labels, classes) });
  }
  const tf = await loadTf();
  await selectBackend(tf, backend);
  const init = initParams(config);
  const weights = init.weights.map((w, i) => tf.variable(tf.tensor2d(w, [d[i]!, d[i + 1]!]), true, `w${i}`));
  const biases = init.biases.map((b, i) => tf.variable(tf.tensor1d(b), true, `b${i}`));
  const optimizer = tf.train.sgd(config.learningRate);
  const losses: number[] = [];
  const times: number[] = [];
  try {
    for (let s = 0; s < warmup + steps; s++) {
      const batch = batches[s % batches.length]!;
      const start = performance.now();
      const x = tf.tensor2d(batch.x, [B, d[0]!]);
      const y = tf.tensor2d(batch.targets, [B, classes]);
      const loss = optimizer.minimize(() => {
        let h: TF.Tensor2D = x;
        for (let i = 0; i < L; i++) {
          h = tf.add(tf.matMul(h, weights[i]!), biases[i]!);
          if (i < L - 1) h = tf.relu(h);
        }
        return tf.losses.softmaxCrossEntropy(y, h) as TF.Scalar;
      }, true);
      if (loss === null) throw new Error('tfjs: minimize returned no loss');
      const value = (await loss.data())[0]!;
      const elapsed = performance.now() - start;
      loss.dispose();
      x.dispose();
      y.dispose();
      losses.push(value);
      if (s >= warmup) times.push(elapsed);
    }
  } finally {
    for (const v of [...weights, ...biases]) v.dispose();
    optimizer.dispose();
  }
  const msPerStep = median(times);
  return backend === 'webgpu' && gpuAdapterInfo !== undefined
    ? { backend, msPerStep, stepMs: times, losses, adapter: gpuAdapterInfo }
    : { backend, msPerStep, stepMs: times, losses };
}
