/**
 * One SGD training step of an MLP as a backend-neutral program of kernel dispatches (the kernels of
 * kernel-interface.ts): named buffers, then stages of dispatches. Dispatches within a stage are
 * independent (no buffer one writes is read or written by another), so a recorder puts a barrier
 * between stages only. Keel's demo records this program once into a reusable command buffer; the tests
 * run it on the CPU kernels and on WebGPU and compare it with reference.ts's `trainStep`.
 *
 * The step (L layers, batch B, widths d0..dL; act0 = x, actL = logits):
 * - forward: `act{i+1} = relu(act{i} · W{i} + b{i})` (`linear`, no ReLU on the last layer);
 * - `softmax_ce_loss` → dAct{L} = ∂loss/∂logits and the mean loss (4 bytes, read back), one dispatch;
 * - backward, layer j from L-1 down to 0: `dAct{j} = dAct{j+1} · W{j}ᵀ ⊙ [act{j} > 0]`
 *   (`matmul_relu_grad`, j > 0) BEFORE W{j} changes; then, in the next stage, `W{j} -= lr · act{j}ᵀ ·
 *   dAct{j+1}` and `b{j} -= lr · colsum(dAct{j+1})` in one `matmul_bias_grad` (TRANS_A, alpha = -lr,
 *   beta = 1: the SGD update fused into the weight-gradient GEMM, dW never stored, the bias gradient a
 *   row of ones of op(A)). 3L dispatches in 2L + 1 stages.
 *
 * Equivalent to reference.ts's trainStep (every gradient uses the pre-step parameters).
 */
import { type MlpKernelName, matmulConstants } from './kernel-interface';
import type { MlpConfig } from './model';

/** A buffer of the program. */
export interface StepBuffer {
  readonly name: string;
  readonly bytes: number;
  /**
   * 'param': weights and biases (persistent, updated in place); 'input': x and labels (written before
   * each step); 'output': the mean loss; 'temp': activations and gradients (transient within a step).
   */
  readonly role: 'param' | 'input' | 'output' | 'temp';
}

/** A dispatch: kernel, bindings (buffer names, whole buffers), constants, workload. */
export interface StepDispatch {
  readonly kernel: MlpKernelName;
  readonly bindings: readonly string[];
  readonly constants: Uint32Array;
  readonly workload: readonly number[];
}

export interface StepProgram {
  readonly buffers: readonly StepBuffer[];
  /** Barrier between stages; dispatches of a stage may run concurrently. */
  readonly stages: readonly (readonly StepDispatch[])[];
}

/** Buffer names: `x`, `labels`, `w{i}`, `b{i}`, `act{i}` (i ≥ 1), `dact{i}` (i ≥ 1), `loss`. */
export const weightName = (i: number): string => `w${i}`;
export const biasName = (i: number): string => `b${i}`;
const act = (i: number): string => (i === 0 ? 'x' : `act${i}`);
const dact = (i: number): string => `dact${i}`;

/** The training step program of `config` (one batch of `config.batch` samples). */
export function trainingStepProgram(config: MlpConfig): StepProgram {
  const d = config.layers;
  const L = d.length - 1;
  const B = config.batch;
  if (L < 1 || !Number.isInteger(B) || B < 1)
    throw new RangeError('step program: needs ≥ 1 layer and batch ≥ 1');
  const lr = config.learningRate;
  const buffers: StepBuffer[] = [
    { name: 'x', bytes: 4 * B * d[0]!, role: 'input' },
    { name: 'labels', bytes: 4 * B, role: 'input' },
  ];
  for (let i = 0; i < L; i++) {
    buffers.push({ name: weightName(i), bytes: 4 * d[i]! * d[i + 1]!, role: 'param' });
    buffers.push({ name: biasName(i), bytes: 4 * d[i + 1]!, role: 'param' });
  }
  for (let i = 1; i <= L; i++) {
    buffers.push({ name: act(i), bytes: 4 * B * d[i]!, role: 'temp' });
    buffers.push({ name: dact(i), bytes: 4 * B * d[i]!, role: 'temp' });
  }
  buffers.push({ name: 'loss', bytes: 4, role: 'output' });

  const stages: StepDispatch[][] = [];
  for (let i = 0; i < L; i++) {
    stages.push([
      {
        kernel: 'linear',
        bindings: [act(i), weightName(i), biasName(i), act(i + 1)],
        constants: matmulConstants({ m: B, n: d[i + 1]!, k: d[i]!, relu: i < L - 1 }),
        workload: [d[i + 1]!, B],
      },
    ]);
  }
  const classes = d[L]!;
  stages.push([
    {
      kernel: 'softmax_ce_loss',
      bindings: [act(L), 'labels', dact(L), 'loss'],
      constants: Uint32Array.of(B, classes),
      workload: [B],
    },
  ]);
  // W{j} -= lr · act{j}ᵀ · dAct{j+1} and b{j} -= lr · colsum(dAct{j+1}), one dispatch.
  const update = (j: number): StepDispatch => ({
    kernel: 'matmul_bias_grad',
    bindings: [act(j), dact(j + 1), weightName(j), biasName(j)],
    constants: matmulConstants({ m: d[j]!, n: d[j + 1]!, k: B, transA: true, alpha: -lr, beta: 1 }),
    workload: [d[j + 1]!, d[j]!],
  });
  for (let j = L - 1; j >= 0; j--) {
    const stage: StepDispatch[] = [];
    if (j > 0) {
      stage.push({
        kernel: 'matmul_relu_grad',
        bindings: [dact(j + 1), weightName(j), act(j), dact(j)],
        constants: matmulConstants({ m: B, n: d[j]!, k: d[j + 1]!, transB: true }),
        workload: [d[j]!, B],
      });
    }
    if (j < L - 1) stage.push(update(j + 1));
    if (j === 0) stage.push(update(0));
    stages.push(stage);
  }
  return { buffers, stages };
}
