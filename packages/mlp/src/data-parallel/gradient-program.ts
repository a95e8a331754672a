/**
 * The data-parallel training step: the forward and backward pass of one shard of the global batch,
 * producing the shard's parameter GRADIENTS instead of updating the parameters (the update is applied
 * once, to every replica alike, after the gradients of all shards were reduced; see
 * train-data-parallel.ts), and its packed binding layout.
 *
 * Program (shard of B rows; act0 = x): forward and `softmax_ce`/`loss_mean` as in step-program.ts;
 * backward for layer j from L-1 down to 0: `gb{j} = colsum(dAct{j+1})`, `gw{j} = act{j}ᵀ · dAct{j+1}`
 * (`matmul` TRANS_A, alpha 1, beta 0) and, for j > 0, `dAct{j} = dAct{j+1} · W{j}ᵀ ⊙ [act{j} > 0]`.
 * The gradients are those of the shard's MEAN loss (softmax_ce divides by B), so the global gradient is
 * Σ_d (B_d / B) · g_d.
 *
 * Layout (5 binding-table slots): 0 `params`: every parameter packed into one buffer (w0, b0, w1, ...
 * at offsets aligned to `alignment`), so a replica is ONE resident tensor and a broadcast is ONE write;
 * 1 `grads`: the gradients at the same offsets, then the shard's loss, so a step's whole result reaches
 * the host in ONE read; 2 `x`; 3 `labels`; 4 the transient arena (activations and their gradients).
 */
import { ErrorCode, KeelError } from '@keel/fence';
import { type IndirectBufferRef, slotRef } from '@keel/hal';
import { matmulConstants } from '../kernel-interface';
import type { MlpConfig } from '../model';
import { biasName, type StepDispatch, type StepProgram, weightName } from '../step-program';

export const PARAMS_SLOT = 0;
export const GRADS_SLOT = 1;
export const X_SLOT = 2;
export const LABELS_SLOT = 3;
export const ARENA_SLOT = 4;
export const GRADIENT_SLOTS = 5;

/** Where each parameter (and its gradient) lives in the packed buffers; depends on the model only. */
export interface PackedParameters {
  /** Parameter names in packing order: w0, b0, w1, b1, ... */
  readonly names: readonly string[];
  /** Byte offset of each parameter in the packed buffer (the same in `params` and `grads`). */
  readonly offsets: readonly number[];
  /** Bytes of each parameter. */
  readonly bytes: readonly number[];
  /** Bytes of the packed parameters (the offsets' padding included): one replica, one broadcast. */
  readonly packedBytes: number;
  /** Bytes of the parameters themselves (no padding): the gradient bytes of one device per step. */
  readonly gradientBytes: number;
  /** Byte offset of the shard's loss in `grads`. */
  readonly lossOffset: number;
  /** Bytes of `grads`: the packed gradients and the loss (one read per device per step). */
  readonly gradsBytes: number;
}

const roundUp = (value: number, alignment: number): number => Math.ceil(value / alignment) * alignment;

/** Packs the parameters of `config` at offsets aligned to `alignment` bytes. */
export function packParameters(config: MlpConfig, alignment: number): PackedParameters {
  if (!Number.isInteger(alignment) || alignment < 4 || alignment % 4 !== 0) {
    throw new KeelError(
      ErrorCode.INVALID_ARGUMENT,
      `packParameters: alignment must be a positive multiple of 4 bytes, got ${alignment}`,
    );
  }
  const d = config.layers;
  const names: string[] = [];
  const offsets: number[] = [];
  const bytes: number[] = [];
  let at = 0;
  let gradientBytes = 0;
  for (let i = 0; i + 1 < d.length; i++) {
    for (const [name, n] of [
      [weightName(i), 4 * d[i]! * d[i + 1]!],
      [biasName(i), 4 * d[i + 1]!],
    ] as const) {
      names.push(name);
      offsets.push(at);
      bytes.push(n);
      gradientBytes += n;
      at = roundUp(at + n, alignment);
    }
  }
  return {
    names,
    offsets,
    bytes,
    packedBytes: at,
    gradientBytes,
    lossOffset: at,
    gradsBytes: at + alignment,
  };
}

/** The gradient program of a shard of `rows` samples and its layout. */
export interface GradientStep {
  readonly rows: number;
  readonly program: StepProgram;
  readonly xBytes: number;
  readonly labelsBytes: number;
  /** Bytes of the transient arena. */
  readonly arenaBytes: number;
  /** The indirect reference a dispatch binds for the program buffer `name`. */
  ref(name: string): IndirectBufferRef;
}

const act = (i: number): string => (i === 0 ? 'x' : `act${i}`);
const dact = (i: number): string => `dact${i}`;
const gradName = (name: string): string => `g${name}`;

/** The gradient step of `config.layers` for a shard of `rows` samples (alignment as for packParameters). */
export function gradientStep(
  config: MlpConfig,
  rows: number,
  packed: PackedParameters,
  alignment: number,
): GradientStep {
  const d = config.layers;
  const L = d.length - 1;
  const B = rows;
  if (L < 1 || !Number.isInteger(B) || B < 1) {
    throw new KeelError(
      ErrorCode.INVALID_ARGUMENT,
      `gradientStep: needs ≥ 1 layer and a shard of ≥ 1 rows, got ${B}`,
    );
  }
  const refs = new Map<string, IndirectBufferRef>();
  const buffers: StepProgram['buffers'][number][] = [
    { name: 'x', bytes: 4 * B * d[0]!, role: 'input' },
    { name: 'labels', bytes: 4 * B, role: 'input' },
  ];
  refs.set('x', slotRef(X_SLOT));
  refs.set('labels', slotRef(LABELS_SLOT));
  packed.names.forEach((name, i) => {
    buffers.push({ name, bytes: packed.bytes[i]!, role: 'param' });
    buffers.push({ name: gradName(name), bytes: packed.bytes[i]!, role: 'output' });
    refs.set(name, slotRef(PARAMS_SLOT, packed.offsets[i]!, packed.bytes[i]!));
    refs.set(gradName(name), slotRef(GRADS_SLOT, packed.offsets[i]!, packed.bytes[i]!));
  });
  buffers.push({ name: 'loss', bytes: 4, role: 'output' });
  refs.set('loss', slotRef(GRADS_SLOT, packed.lossOffset, 4));
  const align = Math.max(256, alignment);
  let arenaBytes = 0;
  const temp = (name: string, bytes: number): void => {
    buffers.push({ name, bytes, role: 'temp' });
    refs.set(name, slotRef(ARENA_SLOT, arenaBytes, bytes));
    arenaBytes = roundUp(arenaBytes + bytes, align);
  };
  for (let i = 1; i <= L; i++) {
    temp(act(i), 4 * B * d[i]!);
    temp(dact(i), 4 * B * d[i]!);
  }
  temp('rowloss', 4 * B);

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
  stages.push([
    {
      kernel: 'softmax_ce',
      bindings: [act(L), 'labels', dact(L), 'rowloss'],
      constants: Uint32Array.of(B, d[L]!),
      workload: [B],
    },
  ]);
  for (let j = L - 1; j >= 0; j--) {
    const stage: StepDispatch[] = [];
    if (j === L - 1) {
      stage.push({
        kernel: 'loss_mean',
        bindings: ['rowloss', 'loss'],
        constants: Uint32Array.of(B),
        workload: [B],
      });
    }
    stage.push({
      kernel: 'colsum',
      bindings: [dact(j + 1), gradName(biasName(j))],
      constants: Uint32Array.of(B, d[j + 1]!),
      workload: [d[j + 1]!],
    });
    stage.push({
      kernel: 'matmul',
      bindings: [act(j), dact(j + 1), gradName(weightName(j))],
      constants: matmulConstants({ m: d[j]!, n: d[j + 1]!, k: B, transA: true, alpha: 1, beta: 0 }),
      workload: [d[j + 1]!, d[j]!],
    });
    if (j > 0) {
      stage.push({
        kernel: 'matmul_relu_grad',
        bindings: [dact(j + 1), weightName(j), act(j), dact(j)],
        constants: matmulConstants({ m: B, n: d[j]!, k: d[j + 1]!, transB: true }),
        workload: [d[j]!, B],
      });
    }
    stages.push(stage);
  }
  return {
    rows: B,
    program: { buffers, stages },
    xBytes: 4 * B * d[0]!,
    labelsBytes: 4 * B,
    arenaBytes,
    ref(name: string): IndirectBufferRef {
      const ref = refs.get(name);
      if (ref === undefined) {
        throw new KeelError(ErrorCode.INVALID_ARGUMENT, `gradientStep: the program has no buffer '${name}'`);
      }
      return ref;
    },
  };
}
