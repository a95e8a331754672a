import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SyntheticDataset } from '../src/dataset';
import { initParams, type MlpConfig, REFERENCE_MLP, stepMultiplyAdds } from '../src/model';
import { Prng } from '../src/prng';
import {
  backward,
  colsum,
  forward,
  matmul,
  type Params,
  softmaxCrossEntropy,
  trainStep,
} from '../src/reference';
import { randomLabels } from './helpers';

const TINY: MlpConfig = { layers: [7, 6, 5, 3], batch: 5, learningRate: 0.1, seed: 11 };

function tinyF64(prng: Prng): Params<Float64Array> {
  const p = initParams(TINY);
  return {
    weights: p.weights.map((w) => Float64Array.from(w)),
    biases: p.biases.map((b) => Float64Array.from(b, () => prng.uniform(-0.1, 0.1))),
  };
}

describe('reference MLP', () => {
  it('backward matches central finite differences of the loss (f64)', () => {
    const prng = new Prng(5);
    const params = tinyF64(prng);
    const x = Float64Array.from({ length: TINY.batch * TINY.layers[0]! }, () => prng.uniform(-1, 1));
    const labels = randomLabels(prng, TINY.batch, TINY.layers[TINY.layers.length - 1]!);
    const lossOf = (): number => forward(TINY, params, x, labels, Float64Array).loss;
    const grads = backward(TINY, params, forward(TINY, params, x, labels, Float64Array), Float64Array);
    const h = 1e-6;
    let worst = 0;
    let checked = 0;
    for (const [kind, tensors] of [
      ['weights', params.weights],
      ['biases', params.biases],
    ] as const) {
      tensors.forEach((tensor, t) => {
        const g = (kind === 'weights' ? grads.weights : grads.biases)[t]!;
        for (let i = 0; i < tensor.length; i++) {
          const saved = tensor[i]!;
          tensor[i] = saved + h;
          const up = lossOf();
          tensor[i] = saved - h;
          const down = lossOf();
          tensor[i] = saved;
          const numeric = (up - down) / (2 * h);
          worst = Math.max(worst, Math.abs(numeric - g[i]!) / Math.max(1e-3, Math.abs(numeric)));
          checked++;
        }
      });
    }
    expect(checked).toBe(7 * 6 + 6 * 5 + 5 * 3 + 6 + 5 + 3);
    expect(worst).toBeLessThan(1e-5);
  });

  it('matmul transposes agree with explicit transposition', () => {
    const prng = new Prng(2);
    const [m, n, k] = [4, 3, 5];
    const a = Float64Array.from({ length: m * k }, () => prng.uniform(-1, 1));
    const b = Float64Array.from({ length: k * n }, () => prng.uniform(-1, 1));
    const at = new Float64Array(k * m);
    const bt = new Float64Array(n * k);
    for (let i = 0; i < m; i++) for (let p = 0; p < k; p++) at[p * m + i] = a[i * k + p]!;
    for (let p = 0; p < k; p++) for (let j = 0; j < n; j++) bt[j * k + p] = b[p * n + j]!;
    const c0 = new Float64Array(m * n);
    matmul(a, b, c0, m, n, k);
    for (const [ta, tb] of [
      [true, false],
      [false, true],
      [true, true],
    ] as const) {
      const c = new Float64Array(m * n);
      matmul(ta ? at : a, tb ? bt : b, c, m, n, k, { transA: ta, transB: tb });
      for (let i = 0; i < c.length; i++) expect(c[i]).toBeCloseTo(c0[i]!, 12);
    }
    const c = Float64Array.from(c0, () => 1);
    matmul(a, b, c, m, n, k, { alpha: 2, beta: -3 });
    for (let i = 0; i < c.length; i++) expect(c[i]).toBeCloseTo(2 * c0[i]! - 3, 12);
  });

  it('softmax cross-entropy: loss of uniform logits is log(classes), gradient rows sum to zero', () => {
    const rows = 3;
    const classes = 4;
    const logits = new Float64Array(rows * classes).fill(2);
    const d = new Float64Array(rows * classes);
    const rowLoss = new Float64Array(rows);
    const loss = softmaxCrossEntropy(logits, Uint32Array.of(0, 1, 3), rows, classes, d, rowLoss);
    expect(loss).toBeCloseTo(Math.log(classes), 12);
    const sums = new Float64Array(classes);
    for (let r = 0; r < rows; r++) {
      let s = 0;
      for (let c = 0; c < classes; c++) s += d[r * classes + c]!;
      expect(s).toBeCloseTo(0, 12);
    }
    colsum(d, rows, classes, sums);
    expect(sums[0]).toBeCloseTo((3 * 0.25 - 1) / rows, 12);
    // Large logits stay finite (max subtraction).
    const big = Float64Array.of(1000, 0, -1000);
    const l = softmaxCrossEntropy(big, Uint32Array.of(1), 1, 3, new Float64Array(3), new Float64Array(1));
    expect(l).toBeCloseTo(1000, 6);
  });

  it('a few SGD steps reduce the loss on the synthetic data set (f32)', () => {
    const config: MlpConfig = { layers: [784, 32, 32, 10], batch: 32, learningRate: 0.05, seed: 1 };
    const data = new SyntheticDataset();
    const params = initParams(config);
    const losses: number[] = [];
    for (let s = 0; s < 30; s++) {
      const batch = data.batch(s, config.batch);
      losses.push(trainStep(config, params, batch.x, batch.labels, Float32Array));
    }
    expect(losses[0]).toBeGreaterThan(1.5);
    expect(Math.max(...losses.slice(-5))).toBeLessThan(losses[0]! * 0.5);
  });

  it("is DESIGN.md's reference MLP: 784-512-512-10, plain SGD lr 0.05, batch 256", () => {
    expect({
      layers: [...REFERENCE_MLP.layers],
      batch: REFERENCE_MLP.batch,
      learningRate: REFERENCE_MLP.learningRate,
    }).toEqual({ layers: [784, 512, 512, 10], batch: 256, learningRate: 0.05 });
    // The same figures as DESIGN.md § The main job words them.
    const design = readFileSync(new URL('../../../docs/DESIGN.md', import.meta.url), 'utf8');
    const job = design.slice(design.indexOf('## The main job'));
    const m = /(\d+(?:-\d+)+), ReLU, softmax cross-entropy, plain SGD lr ([\d.]+), batch (\d+)/.exec(job);
    expect(m, 'the reference MLP sentence of DESIGN.md § The main job').not.toBeNull();
    expect(REFERENCE_MLP.layers.join('-')).toBe(m![1]);
    expect(REFERENCE_MLP.learningRate).toBe(Number(m![2]));
    expect(REFERENCE_MLP.batch).toBe(Number(m![3]));
    expect(Object.isFrozen(REFERENCE_MLP) && Object.isFrozen(REFERENCE_MLP.layers)).toBe(true);
  });

  it('counts the multiply-adds of a step', () => {
    expect(stepMultiplyAdds(REFERENCE_MLP)).toBe(256 * (784 * 512 * 2 + 512 * 512 * 3 + 512 * 10 * 3));
  });
});
