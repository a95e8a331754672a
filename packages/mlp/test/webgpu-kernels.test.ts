/**
 * The MLP's WGSL kernels on raw WebGPU (Dawn; lavapipe on CPU-only machines) against reference.ts:
 * each kernel on awkward shapes and workgroup counts, then whole training steps of the step program.
 * Without an adapter the suite is skipped, except under CI, where that is a failure.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { SyntheticDataset } from '../src/dataset';
import { f32Bits, matmulConstants } from '../src/kernel-interface';
import { cloneParams, initParams, type MlpConfig, REFERENCE_MLP } from '../src/model';
import { Prng } from '../src/prng';
import * as ref from '../src/reference';
import { biasName, trainingStepProgram, weightName } from '../src/step-program';
import {
  gemmTilingName,
  parseGemmTiling,
  WGSL_GEMM_TILING,
  WGSL_GEMM_TILING_CANDIDATES,
  WGSL_GEMM_TILING_GPU,
  WGSL_GEMM_TILING_GPU_PER_SHAPE,
  WGSL_GEMM_TILING_NVIDIA,
  WGSL_GEMM_TILING_SMALL_GPU,
  WGSL_GEMM_TILING_SWIFTSHADER,
} from '../src/webgpu/gemm-tiling';
import {
  GEMM_KINDS,
  gemmBindings,
  gemmCase,
  gemmUpdates,
  maxRelativeError,
  randomArray,
  randomLabels,
  TRANSPOSES,
} from './helpers';
import { acquireGpu, countOf, type Gpu, readF32, run, storage } from './webgpu-harness';

const acquired = await acquireGpu();
if (typeof acquired === 'string' && process.env.CI)
  throw new Error(`WebGPU is required under CI: ${acquired}`);
const gpu = typeof acquired === 'string' ? undefined : acquired;
const skipReason = typeof acquired === 'string' ? acquired : '';

afterAll(() => gpu?.device.destroy());

// lavapipe runs compute on the CPU: generous timeouts on a busy machine.
describe.skipIf(gpu === undefined)(
  `WGSL MLP kernels${skipReason ? ` (skipped: ${skipReason})` : ''}`,
  { timeout: 120_000 },
  () => {
    const g = gpu as Gpu;

    for (const kind of GEMM_KINDS) {
      it(`${kind} equals the reference (shapes not multiple of the tiles, transposes, grid-stride counts)`, async () => {
        const prng = new Prng(kind.length * 3);
        for (const [m, n, k] of [
          [1, 1, 1],
          [37, 29, 11],
          [65, 130, 33],
          [130, 70, 0],
        ] as const) {
          for (const [transA, transB] of TRANSPOSES) {
            for (const explicit of [undefined, [1, 1, 1] as const]) {
              const relu = kind === 'linear' && (m & 1) === 1;
              const beta = gemmUpdates(kind) && (n & 1) === 1 ? 1 : 0;
              const alpha = gemmUpdates(kind) ? -0.05 : 1;
              const { a, b, c0, extra, want, wantD } = gemmCase(prng, kind, {
                m,
                n,
                k,
                transA,
                transB,
                relu,
                alpha,
                beta,
              });
              const out = storage(g, c0);
              const d = storage(g, extra);
              const bindings = gemmBindings(kind, storage(g, a), storage(g, b), out, d);
              run(g, [
                {
                  kernel: kind,
                  bindings,
                  constants: matmulConstants({ m, n, k, transA, transB, relu, alpha, beta }),
                  count: explicit ?? countOf(kind, [n, m]),
                },
              ]);
              const got = await readF32(g, out, m * n);
              const gotD = await readF32(g, d, wantD.length);
              for (const buffer of new Set([...bindings, d])) buffer.destroy();
              expect(
                maxRelativeError(got, Float32Array.from(want)),
                `${m}x${n}x${k} ${transA} ${transB}`,
              ).toBeLessThan(1e-5);
              expect(maxRelativeError(gotD, wantD), `D ${m}x${n}x${k} ${transA} ${transB}`).toBeLessThan(
                1e-5,
              );
            }
          }
        }
      });
    }

    // Register tilings: tiles of tm rows × wg·tn columns (swapped for narrow C when 2N < wg·tn and
    // M > N); workgroup-memory tilings: bm × bn tiles, K in slabs of bk (zero-padded). Shapes on both
    // sides of each boundary, in both orientations, every transpose, any grid, for every shipped tiling
    // and a few the benchmarks sweep (s16x16x4_1x1: slab copies of 64 elements over 256 invocations;
    // s32x32x32_4x4: 16 prefetched values per operand and invocation); split-K inside the workgroup
    // (k2, k4: partial sums added in workgroup memory; s8x8x4_1x1k2 with guarded slab copies,
    // s16x16x8_4x4k2 with vec4 slab reads) and
    // per-shape tilings (narrow for N ≤ narrow.bn: the 1-, 3- and 10-column shapes; wide otherwise);
    // NVIDIA's (k4 and k8: partial sums parked in the op(A) and then the op(B) slabs) and a per-kernel
    // tiling (each GEMM entry point its own tiling and workgroup size). matmul_bias_grad (the ones row
    // of op(A), stored to D) on every one.
    for (const tiling of [
      WGSL_GEMM_TILING_NVIDIA,
      parseGemmTiling('s32x32x8_4x4k4__s16x16x8_4x2k8+s32x32x16_4x4k2__s16x16x8_4x4k8+s16x32x8_2x4'),
      WGSL_GEMM_TILING_GPU_PER_SHAPE,
      parseGemmTiling('s32x32x16_2x2__s8x16x16_1x2k4'),
      parseGemmTiling('s16x16x8_4x4k2'),
      parseGemmTiling('s16x16x16_2x2k4'),
      parseGemmTiling('s8x8x4_1x1k2'),
      WGSL_GEMM_TILING,
      WGSL_GEMM_TILING_SWIFTSHADER,
      WGSL_GEMM_TILING_GPU,
      WGSL_GEMM_TILING_SMALL_GPU,
      parseGemmTiling('128x2x2'),
      parseGemmTiling('s64x64x16_4x4'),
      parseGemmTiling('s64x32x8_8x2'),
      parseGemmTiling('s16x16x4_1x1'),
      parseGemmTiling('s32x32x32_4x4'),
    ])
      it(`matmul family on tile and swap edge shapes (M, N, K in 1, 3, 10, 63, 65, 784, ...), tiling ${gemmTilingName(tiling)}`, async () => {
        const tiled = await acquireGpu(tiling);
        if (typeof tiled === 'string') throw new Error(tiled);
        const g = tiled;
        const prng = new Prng(91);
        const shapes = [
          [784, 10, 3],
          [3, 10, 784],
          [1, 784, 65],
          [784, 1, 63],
          [65, 63, 10],
          [63, 65, 1],
          [64, 63, 3],
          [10, 3, 1],
          [129, 130, 17],
          [17, 257, 2],
        ] as const;
        for (const kind of GEMM_KINDS) {
          for (const [m, n, k] of shapes) {
            for (const [transA, transB] of TRANSPOSES) {
              for (const count of [countOf(kind, [n, m], tiling), [1, 1, 1] as const, [3, 2, 2] as const]) {
                const relu = kind === 'linear';
                const beta = gemmUpdates(kind) ? 0.5 : 0;
                const alpha = gemmUpdates(kind) ? -0.05 : 1;
                const { a, b, c0, extra, want, wantD } = gemmCase(prng, kind, {
                  m,
                  n,
                  k,
                  transA,
                  transB,
                  relu,
                  alpha,
                  beta,
                });
                const out = storage(g, c0);
                const d = storage(g, extra);
                const bindings = gemmBindings(kind, storage(g, a), storage(g, b), out, d);
                run(g, [
                  {
                    kernel: kind,
                    bindings,
                    constants: matmulConstants({ m, n, k, transA, transB, relu, alpha, beta }),
                    count: [count[0], count[1], count[2]],
                  },
                ]);
                const got = await readF32(g, out, m * n);
                const gotD = await readF32(g, d, wantD.length);
                for (const buffer of new Set([...bindings, d])) buffer.destroy();
                // fp32 rounding of a K-term sum grows like √K and depends on the order of the adds
                // (split-K adds partial sums): 1e-5 up to K = 100, then scaled by √(K/100).
                expect(
                  maxRelativeError(got, Float32Array.from(want)),
                  `${kind} ${m}x${n}x${k} ${transA} ${transB} [${count.join(', ')}]`,
                ).toBeLessThan(1e-5 * Math.max(1, Math.sqrt(k / 100)));
                expect(
                  maxRelativeError(gotD, wantD),
                  `D ${kind} ${m}x${n}x${k} ${transA} ${transB} [${count.join(', ')}]`,
                ).toBeLessThan(1e-5 * Math.max(1, Math.sqrt(k / 100)));
              }
            }
          }
        }
        g.device.destroy();
      });

    it('memory-bound kernels equal the reference', async () => {
      const prng = new Prng(17);
      const rows = 37;
      const cols = 300;
      const classes = 10;
      for (const count of [undefined, 1] as const) {
        const x = randomArray(prng, rows * cols);
        const h = randomArray(prng, rows * cols);
        const bias = randomArray(prng, cols);
        const logits = randomArray(prng, rows * classes, -5, 5);
        const labels = randomLabels(prng, rows, classes);
        const b = {
          x: storage(g, x),
          h: storage(g, h),
          bias: storage(g, bias),
          y: storage(g, x),
          r: storage(g, 4 * rows * cols),
          dx: storage(g, 4 * rows * cols),
          sums: storage(g, 4 * cols),
          p: storage(g, bias),
          b2: storage(g, bias),
          logits: storage(g, logits),
          labels: storage(g, labels),
          dz: storage(g, 4 * rows * classes),
          rowLoss: storage(g, 4 * rows),
          loss: storage(g, 4),
          dz2: storage(g, 4 * rows * classes),
          loss2: storage(g, 4),
        };
        const c = (name: Parameters<typeof countOf>[0], workload: number): [number, number, number] =>
          count === undefined ? countOf(name, [workload]) : [1, 1, 1];
        run(g, [
          {
            kernel: 'bias_add',
            bindings: [b.bias, b.y],
            constants: Uint32Array.of(rows, cols),
            count: c('bias_add', rows * cols),
          },
          {
            kernel: 'relu',
            bindings: [b.x, b.r],
            constants: Uint32Array.of(rows * cols),
            count: c('relu', rows * cols),
          },
          {
            kernel: 'relu_grad',
            bindings: [b.x, b.h, b.dx],
            constants: Uint32Array.of(rows * cols),
            count: c('relu_grad', rows * cols),
          },
          {
            kernel: 'colsum',
            bindings: [b.x, b.sums],
            constants: Uint32Array.of(rows, cols),
            count: c('colsum', cols),
          },
          {
            kernel: 'sgd',
            bindings: [b.sums, b.p],
            constants: Uint32Array.of(cols, f32Bits(0.05)),
            count: c('sgd', cols),
          },
          {
            kernel: 'bias_grad_sgd',
            bindings: [b.x, b.b2],
            constants: Uint32Array.of(rows, cols, f32Bits(0.05)),
            count: c('bias_grad_sgd', cols),
          },
          {
            kernel: 'softmax_ce',
            bindings: [b.logits, b.labels, b.dz, b.rowLoss],
            constants: Uint32Array.of(rows, classes),
            count: c('softmax_ce', rows),
          },
          {
            kernel: 'loss_mean',
            bindings: [b.rowLoss, b.loss],
            constants: Uint32Array.of(rows),
            count: [1, 1, 1],
          },
          {
            kernel: 'softmax_ce_loss',
            bindings: [b.logits, b.labels, b.dz2, b.loss2],
            constants: Uint32Array.of(rows, classes),
            count: count === undefined ? countOf('softmax_ce_loss', [rows]) : [3, 2, 1],
          },
        ]);
        const want = Float32Array.from(x);
        ref.biasAdd(want, bias, rows, cols);
        expect(maxRelativeError(await readF32(g, b.y, rows * cols), want)).toBeLessThan(1e-6);
        ref.relu(x, want);
        expect(await readF32(g, b.r, rows * cols)).toEqual(want);
        ref.reluGrad(x, h, want);
        expect(await readF32(g, b.dx, rows * cols)).toEqual(want);
        const sums = new Float32Array(cols);
        ref.colsum(x, rows, cols, sums);
        expect(maxRelativeError(await readF32(g, b.sums, cols), sums)).toBeLessThan(1e-5);
        const p = Float32Array.from(bias);
        ref.sgd(p, sums, Math.fround(0.05));
        expect(maxRelativeError(await readF32(g, b.p, cols), p)).toBeLessThan(1e-5);
        expect(maxRelativeError(await readF32(g, b.b2, cols), p)).toBeLessThan(1e-5);
        const dz = new Float32Array(rows * classes);
        const rl = new Float32Array(rows);
        const mean = ref.softmaxCrossEntropy(logits, labels, rows, classes, dz, rl);
        expect(maxRelativeError(await readF32(g, b.dz, rows * classes), dz)).toBeLessThan(1e-5);
        expect(maxRelativeError(await readF32(g, b.rowLoss, rows), rl)).toBeLessThan(1e-5);
        expect((await readF32(g, b.loss, 1))[0]).toBeCloseTo(mean, 5);
        expect(maxRelativeError(await readF32(g, b.dz2, rows * classes), dz)).toBeLessThan(1e-5);
        expect((await readF32(g, b.loss2, 1))[0]).toBeCloseTo(mean, 5);
        for (const buffer of Object.values(b)) buffer.destroy();
      }
    });

    // The reductions in both styles (reductions.ts): serial with a register tiling (64 columns or rows per
    // workgroup), parallel with a workgroup-memory one (colsum and bias_grad_sgd: 16 columns × 16 row
    // slices, slices unrolled by 4, i.e. 64 rows; softmax_ce: 16 rows × 16 lanes, classes strided over
    // the lanes). Shapes on both sides of those boundaries, with the natural, a single and a 3-D
    // (flattened grid-stride) workgroup count.
    for (const tiling of [WGSL_GEMM_TILING, WGSL_GEMM_TILING_GPU])
      it(`column reductions (colsum, bias_grad_sgd) and softmax_ce on shapes not multiple of their workgroups, tiling ${gemmTilingName(tiling)}`, async () => {
        const tiled = tiling === WGSL_GEMM_TILING ? g : await acquireGpu(tiling);
        if (typeof tiled === 'string') throw new Error(tiled);
        const prng = new Prng(29);
        const counts = (name: Parameters<typeof countOf>[0], workload: number) =>
          [countOf(name, [workload], tiling), [1, 1, 1], [3, 2, 2]] as const;
        for (const [rows, cols] of [
          [37, 10],
          [37, 513],
          [1, 17],
          [256, 512],
          [63, 16],
          [65, 1],
          [300, 33],
        ] as const) {
          for (const count of counts('bias_grad_sgd', cols)) {
            const x = randomArray(prng, rows * cols);
            const bias = randomArray(prng, cols);
            const lr = 0.05;
            const b = { x: storage(tiled, x), sums: storage(tiled, 4 * cols), bias: storage(tiled, bias) };
            run(tiled, [
              { kernel: 'colsum', bindings: [b.x, b.sums], constants: Uint32Array.of(rows, cols), count },
              {
                kernel: 'bias_grad_sgd',
                bindings: [b.x, b.bias],
                constants: Uint32Array.of(rows, cols, f32Bits(lr)),
                count,
              },
            ]);
            const sums = new Float64Array(cols);
            ref.colsum(x, rows, cols, sums);
            const what = `${rows}x${cols} [${count.join(', ')}]`;
            expect(maxRelativeError(await readF32(tiled, b.sums, cols), sums), what).toBeLessThan(1e-5);
            const want = Float64Array.from(bias);
            ref.sgd(want, sums, Math.fround(lr));
            expect(maxRelativeError(await readF32(tiled, b.bias, cols), want), what).toBeLessThan(1e-5);
            for (const buffer of Object.values(b)) buffer.destroy();
          }
        }
        for (const [rows, classes] of [
          [37, 10],
          [256, 10],
          [1, 1],
          [17, 16],
          [15, 17],
          [33, 40],
        ] as const) {
          for (const count of counts('softmax_ce', rows)) {
            const logits = randomArray(prng, rows * classes, -8, 8);
            const labels = randomLabels(prng, rows, classes);
            const b = {
              logits: storage(tiled, logits),
              labels: storage(tiled, labels),
              dz: storage(tiled, 4 * rows * classes),
              rowLoss: storage(tiled, 4 * rows),
            };
            run(tiled, [
              {
                kernel: 'softmax_ce',
                bindings: [b.logits, b.labels, b.dz, b.rowLoss],
                constants: Uint32Array.of(rows, classes),
                count,
              },
            ]);
            const dz = new Float64Array(rows * classes);
            const rl = new Float64Array(rows);
            ref.softmaxCrossEntropy(logits, labels, rows, classes, dz, rl);
            const what = `${rows}x${classes} [${count.join(', ')}]`;
            expect(maxRelativeError(await readF32(tiled, b.dz, rows * classes), dz), what).toBeLessThan(1e-5);
            expect(maxRelativeError(await readF32(tiled, b.rowLoss, rows), rl), what).toBeLessThan(1e-5);
            for (const buffer of Object.values(b)) buffer.destroy();
          }
        }
        if (tiled !== g) tiled.device.destroy();
      });

    for (const tiling of [WGSL_GEMM_TILING, WGSL_GEMM_TILING_GPU])
      it(`softmax_ce gives a NaN loss for a label ≥ classes and the softmax gradient without the one-hot, tiling ${gemmTilingName(tiling)}`, async () => {
        const tiled = tiling === WGSL_GEMM_TILING ? g : await acquireGpu(tiling);
        if (typeof tiled === 'string') throw new Error(tiled);
        const rows = 19;
        const classes = 10;
        const prng = new Prng(31);
        const logits = randomArray(prng, rows * classes, -4, 4);
        const labels = randomLabels(prng, rows, classes);
        labels[3] = classes;
        labels[17] = 1000;
        const b = {
          logits: storage(tiled, logits),
          labels: storage(tiled, labels),
          dz: storage(tiled, 4 * rows * classes),
          rowLoss: storage(tiled, 4 * rows),
        };
        const loss = storage(tiled, 4);
        run(tiled, [
          {
            kernel: 'softmax_ce',
            bindings: [b.logits, b.labels, b.dz, b.rowLoss],
            constants: Uint32Array.of(rows, classes),
            count: countOf('softmax_ce', [rows], tiling),
          },
          {
            kernel: 'softmax_ce_loss',
            bindings: [b.logits, b.labels, storage(tiled, 4 * rows * classes), loss],
            constants: Uint32Array.of(rows, classes),
            count: countOf('softmax_ce_loss', [rows], tiling),
          },
        ]);
        expect((await readF32(tiled, loss, 1))[0]).toBeNaN(); // the mean of losses with NaNs
        loss.destroy();
        const rowLoss = await readF32(tiled, b.rowLoss, rows);
        const dz = await readF32(tiled, b.dz, rows * classes);
        const valid = Uint32Array.from(labels, (l) => (l < classes ? l : 0));
        const wantDz = new Float64Array(rows * classes);
        const wantLoss = new Float64Array(rows);
        ref.softmaxCrossEntropy(logits, valid, rows, classes, wantDz, wantLoss);
        for (const r of [3, 17]) {
          expect(rowLoss[r]).toBeNaN();
          wantDz[r * classes] = wantDz[r * classes]! + 1 / rows; // no one-hot for an out-of-range label
        }
        expect(maxRelativeError(dz, wantDz)).toBeLessThan(1e-5);
        const others = (a: ArrayLike<number>) => Array.from(a).filter((_, r) => r !== 3 && r !== 17);
        expect(maxRelativeError(others(rowLoss), others(wantLoss))).toBeLessThan(1e-5);
        for (const buffer of Object.values(b)) buffer.destroy();
        if (tiled !== g) tiled.device.destroy();
      });

    async function trainOnGpu(
      config: MlpConfig,
      steps: number,
      g: Gpu = gpu as Gpu,
    ): Promise<{ losses: number[]; params: ReturnType<typeof initParams> }> {
      const program = trainingStepProgram(config);
      const buffers = new Map(program.buffers.map((b) => [b.name, storage(g, b.bytes)]));
      const init = initParams(config);
      for (const [i, w] of init.weights.entries())
        g.device.queue.writeBuffer(buffers.get(weightName(i))!, 0, w);
      for (const [i, b] of init.biases.entries()) g.device.queue.writeBuffer(buffers.get(biasName(i))!, 0, b);
      const data = new SyntheticDataset({
        inputSize: config.layers[0]!,
        classes: config.layers[config.layers.length - 1]!,
        seed: 5,
      });
      const dispatches = program.stages.flat().map((d) => ({
        kernel: d.kernel,
        bindings: d.bindings.map((n) => buffers.get(n)!),
        constants: d.constants,
        count: countOf(d.kernel, d.workload, g.tiling),
      }));
      const losses: number[] = [];
      for (let s = 0; s < steps; s++) {
        const batch = data.batch(s, config.batch);
        g.device.queue.writeBuffer(buffers.get('x')!, 0, batch.x);
        g.device.queue.writeBuffer(buffers.get('labels')!, 0, batch.labels);
        run(g, dispatches);
        losses.push((await readF32(g, buffers.get('loss')!, 1))[0]!);
      }
      const read = (name: string, n: number) => readF32(g, buffers.get(name)!, n);
      const params = {
        weights: await Promise.all(init.weights.map((w, i) => read(weightName(i), w.length))),
        biases: await Promise.all(init.biases.map((b, i) => read(biasName(i), b.length))),
      };
      for (const b of buffers.values()) b.destroy();
      return { losses, params };
    }

    function trainOnReference(config: MlpConfig, steps: number) {
      const params = cloneParams(initParams(config));
      const data = new SyntheticDataset({
        inputSize: config.layers[0]!,
        classes: config.layers[config.layers.length - 1]!,
        seed: 5,
      });
      const losses: number[] = [];
      for (let s = 0; s < steps; s++) {
        const batch = data.batch(s, config.batch);
        losses.push(ref.trainStep(config, params, batch.x, batch.labels, Float32Array));
      }
      return { losses, params };
    }

    it('training steps of the step program match reference trainStep (small MLP, 5 steps)', async () => {
      const config: MlpConfig = { layers: [37, 19, 23, 7], batch: 13, learningRate: 0.1, seed: 4 };
      const want = trainOnReference(config, 5);
      const got = await trainOnGpu(config, 5);
      for (let s = 0; s < 5; s++) expect(got.losses[s]).toBeCloseTo(want.losses[s]!, 4);
      for (let i = 0; i < 3; i++) {
        expect(maxRelativeError(got.params.weights[i]!, want.params.weights[i]!)).toBeLessThan(1e-4);
        expect(maxRelativeError(got.params.biases[i]!, want.params.biases[i]!)).toBeLessThan(1e-4);
      }
    });

    for (const tiling of [
      WGSL_GEMM_TILING,
      WGSL_GEMM_TILING_GPU,
      WGSL_GEMM_TILING_GPU_PER_SHAPE,
      WGSL_GEMM_TILING_NVIDIA,
      parseGemmTiling(WGSL_GEMM_TILING_CANDIDATES[7]!),
    ])
      it(`training steps match on the reference MLP (784-512-512-10, batch 256, 2 steps), tiling ${gemmTilingName(tiling)}`, async () => {
        const tiled = tiling === WGSL_GEMM_TILING ? g : await acquireGpu(tiling);
        if (typeof tiled === 'string') throw new Error(tiled);
        const want = trainOnReference(REFERENCE_MLP, 2);
        const got = await trainOnGpu(REFERENCE_MLP, 2, tiled);
        if (tiled !== g) tiled.device.destroy();
        for (let s = 0; s < 2; s++) expect(got.losses[s]).toBeCloseTo(want.losses[s]!, 4);
        for (let i = 0; i < 3; i++) {
          expect(maxRelativeError(got.params.weights[i]!, want.params.weights[i]!)).toBeLessThan(1e-4);
          expect(maxRelativeError(got.params.biases[i]!, want.params.biases[i]!)).toBeLessThan(1e-4);
        }
      });
  },
);
