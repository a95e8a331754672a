/**
 * The CPU kernel module through the device's kernel ABI (workgroups of a dispatch run one by one in a
 * shuffled order): matmul family on both paths (copy, zero-copy), the memory-bound kernels, and whole
 * training steps of the step program against reference.ts.
 */
import type { Kernel, KernelBinding, KernelContext } from '@keel/device-cpu';
import { beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { createMlpCpuKernels, type MlpCpuKernels } from '../src/cpu/create-kernels';
import { MLP_CPU_EXPORTS } from '../src/cpu/descriptors';
import type { MlpCpuKernel, WasmMemoryBinding, WasmMemoryContext } from '../src/cpu/kernel-context';
import { GEMM_SCRATCH_BYTES } from '../src/cpu/matmul-kernels';
import { SyntheticDataset } from '../src/dataset';
import { f32Bits, type MlpKernelName, matmulConstants } from '../src/kernel-interface';
import { cloneParams, initParams, type MlpConfig, REFERENCE_MLP } from '../src/model';
import { Prng } from '../src/prng';
import * as ref from '../src/reference';
import { biasName, trainingStepProgram, weightName } from '../src/step-program';
import {
  Arena,
  dispatch,
  GEMM_KINDS,
  gemmBindings,
  gemmCase,
  gemmModule,
  gemmUpdates,
  maxRelativeError,
  randomArray,
  randomLabels,
  TRANSPOSES,
} from './helpers';

let kernels: MlpCpuKernels;
let copyKernels: MlpCpuKernels;

beforeAll(async () => {
  const module = await gemmModule();
  kernels = createMlpCpuKernels(module);
  copyKernels = createMlpCpuKernels(module, { forceCopy: true });
});

function countOf(name: MlpKernelName, workload: readonly number[]): [number, number, number] {
  const d = MLP_CPU_EXPORTS.find((e) => e.name === name)!;
  const c = d.workgroupCount!(workload);
  return [c[0], c[1], c[2]];
}

describe('CPU kernel ABI', () => {
  it('every kernel is a @keel/device-cpu Kernel (type-level) and every export has a function', () => {
    const { stats: _stats, ...functions } = kernels;
    const asDeviceKernels: Record<string, Kernel> = functions;
    for (const e of MLP_CPU_EXPORTS) expect(typeof asDeviceKernels[e.name]).toBe('function');
  });

  it("the kernels' context types are @keel/device-cpu's own; the zero-copy members only an optional extension", () => {
    // Issue 16: the ABI was declared again here, with members the device never provides. Now every
    // device context and binding is accepted as is, and the extension adds nothing required.
    expectTypeOf<KernelContext>().toExtend<WasmMemoryContext>();
    expectTypeOf<KernelBinding>().toExtend<WasmMemoryBinding>();
    expectTypeOf<WasmMemoryContext>().toExtend<KernelContext>();
    expectTypeOf<MlpCpuKernel>().toExtend<Kernel>();
    const { stats: _stats, ...functions } = kernels;
    for (const kernel of Object.values(functions)) expectTypeOf(kernel).toExtend<Kernel>();
  });
});

describe('CPU matmul kernels', () => {
  const shapes = [
    [1, 1, 1],
    [5, 3, 0],
    [37, 29, 11],
    [64, 130, 33],
    [200, 70, 65],
  ] as const;
  const counts: readonly (readonly [number, number, number] | undefined)[] = [
    undefined,
    [1, 1, 1],
    [3, 2, 1],
    [7, 5, 1],
  ];

  for (const kind of GEMM_KINDS) {
    it(`${kind}: copy and zero-copy paths equal the reference, for any workgroup count`, () => {
      const prng = new Prng(kind.length);
      for (const [m, n, k] of shapes) {
        for (const [transA, transB] of TRANSPOSES) {
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
          const constants = matmulConstants({ m, n, k, transA, transB, relu, alpha, beta });
          for (const count of counts) {
            const results: Float32Array[] = [];
            const resultsD: Float32Array[] = [];
            for (const zeroCopy of [false, true]) {
              const arena = new Arena(
                4 * (2 * m * k + 2 * k * n + 3 * m * n + n) + 4096,
                zeroCopy,
                zeroCopy ? GEMM_SCRATCH_BYTES : 0,
              );
              const out = arena.binding(c0);
              const d = arena.binding(extra);
              const bindings = gemmBindings(kind, arena.binding(a), arena.binding(b), out, d);
              const ks = zeroCopy ? kernels : copyKernels;
              const before = { ...ks.stats };
              dispatch(ks[kind], count ?? countOf(kind, [n, m]), bindings, constants, arena.localMemory);
              if (zeroCopy) expect(ks.stats.zeroCopyTiles).toBeGreaterThan(before.zeroCopyTiles);
              else expect(ks.stats.copiedTiles).toBeGreaterThan(before.copiedTiles);
              results.push(out.f32.slice());
              resultsD.push(d.f32.slice(0, wantD.length));
            }
            expect(results[1]).toEqual(results[0]);
            expect(maxRelativeError(results[0]!, Float32Array.from(want))).toBeLessThan(1e-5);
            expect(resultsD[1]).toEqual(resultsD[0]);
            expect(maxRelativeError(resultsD[0]!, wantD), `D ${m}x${n}x${k}`).toBeLessThan(1e-5);
          }
        }
      }
    });
  }

  it('rejects bindings smaller than the constants say', () => {
    const arena = new Arena(1 << 16);
    const small = arena.binding(16);
    expect(() =>
      dispatch(kernels.matmul, [1, 1, 1], [small, small, small], matmulConstants({ m: 4, n: 4, k: 4 })),
    ).toThrow(/binding 'A' has 16 bytes, the constants need 64/);
  });
});

describe('CPU memory-bound kernels', () => {
  const prng = new Prng(99);
  const rows = 37;
  const cols = 23;
  const arena = new Arena(1 << 20);

  it('bias_add, relu, relu_grad, colsum, sgd, bias_grad_sgd equal the reference', () => {
    for (const count of [1, 3, 8]) {
      const x = randomArray(prng, rows * cols);
      const bias = randomArray(prng, cols);
      // bias_add
      const y = arena.binding(x);
      dispatch(kernels.bias_add, [count, 1, 1], [arena.binding(bias), y], Uint32Array.of(rows, cols));
      const want = Float32Array.from(x);
      ref.biasAdd(want, bias, rows, cols);
      expect(y.f32).toEqual(want);
      // relu
      const r = arena.binding(rows * cols * 4);
      dispatch(kernels.relu, [count, 1, 1], [arena.binding(x), r], Uint32Array.of(rows * cols));
      ref.relu(x, want);
      expect(r.f32).toEqual(want);
      // relu_grad
      const h = randomArray(prng, rows * cols);
      const dx = arena.binding(rows * cols * 4);
      dispatch(
        kernels.relu_grad,
        [count, 1, 1],
        [arena.binding(x), arena.binding(h), dx],
        Uint32Array.of(rows * cols),
      );
      ref.reluGrad(x, h, want);
      expect(dx.f32).toEqual(want);
      // colsum
      const out = arena.binding(cols * 4);
      dispatch(kernels.colsum, [count, 1, 1], [arena.binding(x), out], Uint32Array.of(rows, cols));
      const sums = new Float32Array(cols);
      ref.colsum(x, rows, cols, sums);
      expect(maxRelativeError(out.f32, sums)).toBeLessThan(1e-6);
      // sgd
      const p = arena.binding(bias);
      dispatch(kernels.sgd, [count, 1, 1], [arena.binding(sums), p], Uint32Array.of(cols, f32Bits(0.05)));
      const pw = Float32Array.from(bias);
      ref.sgd(pw, sums, Math.fround(0.05));
      expect(maxRelativeError(p.f32, pw)).toBeLessThan(1e-6);
      // bias_grad_sgd
      const b2 = arena.binding(bias);
      dispatch(
        kernels.bias_grad_sgd,
        [count, 1, 1],
        [arena.binding(x), b2],
        Uint32Array.of(rows, cols, f32Bits(0.05)),
      );
      expect(maxRelativeError(b2.f32, pw)).toBeLessThan(1e-6);
    }
  });

  it('softmax_ce, loss_mean and softmax_ce_loss equal the reference', () => {
    for (const count of [1, 2, 5]) {
      const classes = 10;
      const logits = randomArray(prng, rows * classes, -5, 5);
      const labels = randomLabels(prng, rows, classes);
      const dz = arena.binding(rows * classes * 4);
      const rowLoss = arena.binding(rows * 4);
      dispatch(
        kernels.softmax_ce,
        [count, 1, 1],
        [arena.binding(logits), arena.binding(labels), dz, rowLoss],
        Uint32Array.of(rows, classes),
      );
      const wantD = new Float32Array(rows * classes);
      const wantL = new Float32Array(rows);
      const mean = ref.softmaxCrossEntropy(logits, labels, rows, classes, wantD, wantL);
      expect(maxRelativeError(dz.f32, wantD)).toBeLessThan(1e-6);
      expect(maxRelativeError(rowLoss.f32, wantL)).toBeLessThan(1e-6);
      const loss = arena.binding(4);
      dispatch(kernels.loss_mean, [count, 1, 1], [rowLoss, loss], Uint32Array.of(rows));
      expect(loss.f32[0]).toBeCloseTo(mean, 5);
      // softmax_ce_loss: both in one kernel (workgroup 0 does all; any count).
      const dz2 = arena.binding(rows * classes * 4);
      const loss2 = arena.binding(4);
      dispatch(
        kernels.softmax_ce_loss,
        [count, 1, 1],
        [arena.binding(logits), arena.binding(labels), dz2, loss2],
        Uint32Array.of(rows, classes),
      );
      expect(maxRelativeError(dz2.f32, wantD)).toBeLessThan(1e-6);
      expect(loss2.f32[0]).toBeCloseTo(mean, 5);
    }
    expect(() =>
      dispatch(
        kernels.softmax_ce_loss,
        [1, 1, 1],
        [arena.binding(4 * 10), arena.binding(Uint32Array.of(12)), arena.binding(40), arena.binding(4)],
        Uint32Array.of(1, 10),
      ),
    ).toThrow(/softmax_ce_loss: label 12/);
    const bad = arena.binding(Uint32Array.of(12));
    expect(() =>
      dispatch(
        kernels.softmax_ce,
        [1, 1, 1],
        [arena.binding(4 * 10), bad, arena.binding(40), arena.binding(4)],
        Uint32Array.of(1, 10),
      ),
    ).toThrow(/label 12/);
  });
});

/** Runs training steps of the step program on the CPU kernels; returns the losses and final params. */
function trainOnKernels(
  config: MlpConfig,
  steps: number,
  zeroCopy: boolean,
): { losses: number[]; params: ReturnType<typeof initParams> } {
  const program = trainingStepProgram(config);
  const total = program.buffers.reduce((s, b) => s + b.bytes + 64, 0);
  const arena = new Arena(total + 4096, zeroCopy, zeroCopy ? GEMM_SCRATCH_BYTES : 0);
  const buffers = new Map(program.buffers.map((b) => [b.name, arena.binding(b.bytes)]));
  const init = initParams(config);
  for (const [i, w] of init.weights.entries()) buffers.get(weightName(i))!.f32.set(w);
  for (const [i, b] of init.biases.entries()) buffers.get(biasName(i))!.f32.set(b);
  const data = new SyntheticDataset({
    inputSize: config.layers[0]!,
    classes: config.layers[config.layers.length - 1]!,
    seed: 5,
  });
  const losses: number[] = [];
  const ks = zeroCopy ? kernels : copyKernels;
  for (let s = 0; s < steps; s++) {
    const batch = data.batch(s, config.batch);
    buffers.get('x')!.f32.set(batch.x);
    buffers.get('labels')!.u32.set(batch.labels);
    for (const stage of program.stages) {
      for (const d of stage) {
        dispatch(
          ks[d.kernel],
          countOf(d.kernel, d.workload),
          d.bindings.map((n) => buffers.get(n)!),
          d.constants,
          arena.localMemory,
          s,
        );
      }
    }
    losses.push(buffers.get('loss')!.f32[0]!);
  }
  return {
    losses,
    params: {
      weights: init.weights.map((_, i) => buffers.get(weightName(i))!.f32.slice()),
      biases: init.biases.map((_, i) => buffers.get(biasName(i))!.f32.slice()),
    },
  };
}

function trainOnReference(
  config: MlpConfig,
  steps: number,
): { losses: number[]; params: ReturnType<typeof initParams> } {
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

describe('CPU training step program', () => {
  it('matches reference trainStep on a small MLP (both paths, 5 steps)', () => {
    const config: MlpConfig = { layers: [37, 19, 23, 7], batch: 13, learningRate: 0.1, seed: 4 };
    const want = trainOnReference(config, 5);
    for (const zeroCopy of [false, true]) {
      const got = trainOnKernels(config, 5, zeroCopy);
      for (let s = 0; s < 5; s++) expect(got.losses[s]).toBeCloseTo(want.losses[s]!, 4);
      for (let i = 0; i < 3; i++) {
        expect(maxRelativeError(got.params.weights[i]!, want.params.weights[i]!)).toBeLessThan(1e-4);
        expect(maxRelativeError(got.params.biases[i]!, want.params.biases[i]!)).toBeLessThan(1e-4);
      }
    }
  });

  it('matches reference trainStep on the reference MLP (784-512-512-10, batch 256, 2 steps)', () => {
    const want = trainOnReference(REFERENCE_MLP, 2);
    const got = trainOnKernels(REFERENCE_MLP, 2, true);
    for (let s = 0; s < 2; s++) expect(got.losses[s]).toBeCloseTo(want.losses[s]!, 4);
    for (let i = 0; i < 3; i++) {
      expect(maxRelativeError(got.params.weights[i]!, want.params.weights[i]!)).toBeLessThan(1e-4);
      expect(maxRelativeError(got.params.biases[i]!, want.params.biases[i]!)).toBeLessThan(1e-4);
    }
  }, 60_000);
});
