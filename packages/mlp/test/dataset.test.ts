import { describe, expect, it } from 'vitest';
import { oneHot, REFERENCE_DATASET, SyntheticDataset } from '../src/dataset';
import { initParams, REFERENCE_MLP } from '../src/model';
import { deriveSeed, Prng } from '../src/prng';

describe('prng', () => {
  it('is deterministic and uniform-ish', () => {
    const a = new Prng(42);
    const b = new Prng(42);
    const xs = Array.from({ length: 1000 }, () => a.nextFloat());
    expect(xs).toEqual(Array.from({ length: 1000 }, () => b.nextFloat()));
    expect(Math.min(...xs)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...xs)).toBeLessThan(1);
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    expect(Math.abs(mean - 0.5)).toBeLessThan(0.05);
    expect(new Prng(43).nextU32()).not.toBe(new Prng(42).nextU32());
    expect(deriveSeed(1, 0)).not.toBe(deriveSeed(1, 1));
  });

  it('keeps its exact sequence (Keel and TensorFlow.js runs rely on identical data)', () => {
    const p = new Prng(1);
    expect([p.nextU32(), p.nextU32(), p.nextU32()]).toMatchInlineSnapshot(`
      [
        2442144158,
        3238099751,
        3819917871,
      ]
    `);
  });
});

describe('synthetic data set', () => {
  it('makes reproducible batches: prototype + noise in [-1, 1), labels < classes', () => {
    const data = new SyntheticDataset();
    const b1 = data.batch(3, 16);
    const b2 = new SyntheticDataset().batch(3, 16);
    expect(b1.x.every((v, i) => v === b2.x[i])).toBe(true);
    expect(b1.labels).toEqual(b2.labels);
    expect(data.batch(4, 16).x).not.toEqual(b1.x);
    const { inputSize, classes } = REFERENCE_DATASET;
    expect(b1.x.length).toBe(16 * inputSize);
    for (let s = 0; s < 16; s++) {
      const label = b1.labels[s]!;
      expect(label).toBeLessThan(classes);
      for (let j = 0; j < inputSize; j++) {
        const noise = b1.x[s * inputSize + j]! - data.prototypes[label * inputSize + j]!;
        expect(noise).toBeGreaterThanOrEqual(-1 - 1e-6);
        expect(noise).toBeLessThan(1 + 1e-6);
      }
    }
    for (const v of data.prototypes) {
      expect(v).toBeGreaterThanOrEqual(-1);
      expect(v).toBeLessThan(1);
    }
  });

  it('packs x and labels in one ArrayBuffer, labels at a 256-byte aligned offset (one upload per batch)', () => {
    const ds = new SyntheticDataset(REFERENCE_DATASET);
    for (const size of [1, 3, 256]) {
      const { x, labels } = ds.batch(7, size);
      const labelsOffset = Math.ceil(x.byteLength / 256) * 256;
      expect(x.byteOffset).toBe(0);
      expect(labels.buffer).toBe(x.buffer);
      expect(labels.byteOffset).toBe(labelsOffset);
      expect(x.buffer.byteLength).toBe(labelsOffset + 4 * size);
      expect(x).toHaveLength(size * REFERENCE_DATASET.inputSize);
      expect(labels).toHaveLength(size);
    }
  });

  it('covers every class and one-hot encodes', () => {
    const { labels } = new SyntheticDataset().batch(0, 256);
    expect(new Set(labels).size).toBe(10);
    const hot = oneHot(Uint32Array.of(2, 0), 3);
    expect(Array.from(hot)).toEqual([0, 0, 1, 1, 0, 0]);
  });

  it('initialises the reference model deterministically (Glorot-uniform, zero bias)', () => {
    const a = initParams(REFERENCE_MLP);
    const b = initParams(REFERENCE_MLP);
    expect(a.weights.every((w, i) => w.every((v, j) => v === b.weights[i]![j]))).toBe(true);
    expect(a.weights.map((w) => w.length)).toEqual([784 * 512, 512 * 512, 512 * 10]);
    const limit = Math.sqrt(6 / (784 + 512));
    expect(a.weights[0]!.reduce((m, v) => Math.max(m, Math.abs(v)), 0)).toBeLessThanOrEqual(limit);
    expect(a.biases.every((bias) => bias.every((v) => v === 0))).toBe(true);
  });
});
