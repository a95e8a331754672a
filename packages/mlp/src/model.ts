/**
 * The reference MLP shared by Keel and the TensorFlow.js benchmark: shapes, hyper-parameters and the
 * seeded initialisation. Both sides train exactly this model on exactly the same data and weights.
 *
 * Layout conventions (all f32, row-major):
 * - layer i maps `layers[i]` inputs to `layers[i + 1]` outputs;
 * - weight i is `[layers[i] × layers[i + 1]]` (in × out), so a layer is `Y = X · W + b`;
 * - bias i is `[layers[i + 1]]`;
 * - hidden layers use ReLU; the last layer produces logits for softmax cross-entropy (mean over the
 *   batch); plain SGD updates every parameter with `p -= learningRate · ∂loss/∂p`.
 */
import { deriveSeed, Prng } from './prng';

export interface MlpConfig {
  /** Layer widths, input first, classes last (at least two entries). */
  readonly layers: readonly number[];
  /** Samples per training step. */
  readonly batch: number;
  /** Plain SGD step size. */
  readonly learningRate: number;
  /** Seed of the weight initialisation. */
  readonly seed: number;
}

/** The reference workload: 784-512-512-10, ReLU, softmax cross-entropy, SGD lr 0.05, batch 256. */
export const REFERENCE_MLP: MlpConfig = Object.freeze({
  layers: Object.freeze([784, 512, 512, 10]),
  batch: 256,
  learningRate: 0.05,
  seed: 0x6b65656c, // 'keel'
});

/** Parameters: `weights[i]` is `[layers[i] × layers[i + 1]]`, `biases[i]` is `[layers[i + 1]]`. */
export interface MlpParams {
  readonly weights: Float32Array<ArrayBuffer>[];
  readonly biases: Float32Array<ArrayBuffer>[];
}

/** Number of layers (weight matrices). */
export function layerCount(config: MlpConfig): number {
  return config.layers.length - 1;
}

/** Multiply-adds of one training step (forward, input gradients except the first layer's, weight gradients). */
export function stepMultiplyAdds(config: MlpConfig): number {
  let total = 0;
  for (let i = 0; i < layerCount(config); i++) {
    const macs = config.batch * config.layers[i]! * config.layers[i + 1]!;
    total += macs * (i === 0 ? 2 : 3);
  }
  return total;
}

/**
 * Glorot-uniform weights (limit √(6 / (in + out))) drawn from a Prng seeded with
 * `deriveSeed(config.seed, layer)`, zero biases. Deterministic: the same config gives the same bits.
 */
export function initParams(config: MlpConfig): MlpParams {
  const weights: Float32Array<ArrayBuffer>[] = [];
  const biases: Float32Array<ArrayBuffer>[] = [];
  for (let i = 0; i < layerCount(config); i++) {
    const fanIn = config.layers[i]!;
    const fanOut = config.layers[i + 1]!;
    const limit = Math.sqrt(6 / (fanIn + fanOut));
    const prng = new Prng(deriveSeed(config.seed, i));
    const w = new Float32Array(fanIn * fanOut);
    for (let j = 0; j < w.length; j++) w[j] = prng.uniform(-limit, limit);
    weights.push(w);
    biases.push(new Float32Array(fanOut));
  }
  return { weights, biases };
}

/** A deep copy of the parameters. */
export function cloneParams(params: MlpParams): MlpParams {
  return { weights: params.weights.map((w) => w.slice()), biases: params.biases.map((b) => b.slice()) };
}
