/**
 * The deterministic synthetic data set of the reference MLP: `classes` prototypes drawn uniformly in
 * [-1, 1), and each sample is its class's prototype plus independent uniform noise in [-1, 1).
 *
 * Contract: batch `i` depends only on (seed, inputSize, classes, batchSize, i) — batches can be made in
 * any order, on any thread, by Keel and by TensorFlow.js alike, and are bit-identical. Labels are class
 * indices (u32); `oneHot` turns them into the f32 targets TensorFlow.js wants.
 */
import { deriveSeed, Prng } from './prng';

export interface Batch {
  /** `[batchSize × inputSize]` f32, row-major. */
  readonly x: Float32Array<ArrayBuffer>;
  /** `[batchSize]` class indices in [0, classes). */
  readonly labels: Uint32Array<ArrayBuffer>;
}

export interface DatasetConfig {
  readonly inputSize: number;
  readonly classes: number;
  readonly seed: number;
}

/** The reference data set (784 inputs, 10 classes). */
export const REFERENCE_DATASET: DatasetConfig = Object.freeze({
  inputSize: 784,
  classes: 10,
  seed: 0x64617461,
});

export class SyntheticDataset {
  /** `[classes × inputSize]` prototypes. */
  readonly prototypes: Float32Array<ArrayBuffer>;

  constructor(readonly config: DatasetConfig = REFERENCE_DATASET) {
    const { inputSize, classes, seed } = config;
    if (!(Number.isInteger(inputSize) && inputSize > 0 && Number.isInteger(classes) && classes > 0)) {
      throw new RangeError(`dataset: inputSize and classes must be positive integers`);
    }
    const prng = new Prng(deriveSeed(seed, 0xffff_ffff));
    this.prototypes = new Float32Array(classes * inputSize);
    for (let i = 0; i < this.prototypes.length; i++) this.prototypes[i] = prng.uniform(-1, 1);
  }

  /**
   * Batch number `index` (a non-negative integer) of `batchSize` samples. `x` and `labels` share one
   * ArrayBuffer: x at 0, labels at x's byte length rounded up to 256 (a storage-offset alignment every
   * device accepts), so a trainer uploads a batch with one write into one device buffer.
   */
  batch(index: number, batchSize: number): Batch {
    const { inputSize, classes, seed } = this.config;
    const prng = new Prng(deriveSeed(seed, index));
    const xLength = batchSize * inputSize;
    const labelsOffset = Math.ceil((4 * xLength) / 256) * 256;
    const bytes = new ArrayBuffer(labelsOffset + 4 * batchSize);
    const x = new Float32Array(bytes, 0, xLength);
    const labels = new Uint32Array(bytes, labelsOffset, batchSize);
    for (let s = 0; s < batchSize; s++) {
      const label = prng.nextInt(classes);
      labels[s] = label;
      const proto = label * inputSize;
      const row = s * inputSize;
      for (let j = 0; j < inputSize; j++) x[row + j] = this.prototypes[proto + j]! + prng.uniform(-1, 1);
    }
    return { x, labels };
  }
}

/** `[labels.length × classes]` one-hot f32 targets. */
export function oneHot(labels: Uint32Array, classes: number): Float32Array<ArrayBuffer> {
  const out = new Float32Array(labels.length * classes);
  for (let i = 0; i < labels.length; i++) out[i * classes + labels[i]!] = 1;
  return out;
}
