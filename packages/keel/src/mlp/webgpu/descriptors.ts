/**
 * Export descriptors of the MLP's WebGPU executable (the WGSL of wgsl.ts): the interface of
 * ../kernel-interface.ts plus WebGPU workgroup sizes and counts. Counts stay within 65535 per
 * dimension (the kernels walk grid-stride, so a capped count still covers the whole workload).
 */
import type { ExportDescriptor, WgslExecutableSource, WorkgroupCount, WorkgroupSize } from '@keel/hal';
import { MLP_KERNEL_NAMES, MLP_KERNEL_SIGNATURES, type MlpKernelName } from '../kernel-interface';
import { MLP_WGSL, WGSL_MATMUL_TILE, WGSL_SOFTMAX_WORKGROUP, WGSL_WORKGROUP } from './wgsl';

const MAX_COUNT = 65535;
const ceilDiv = (a: number, b: number): number => Math.min(MAX_COUNT, Math.max(1, Math.ceil(a / b)));

function linear(per: number): (workload: readonly number[]) => WorkgroupCount {
  return (workload) => [ceilDiv(workload[0] ?? 1, per), 1, 1];
}

const matmulCount = (workload: readonly number[]): WorkgroupCount => [
  ceilDiv(workload[0] ?? 1, WGSL_MATMUL_TILE),
  ceilDiv(workload[1] ?? 1, WGSL_MATMUL_TILE),
  1,
];

const shapes: Record<
  MlpKernelName,
  { size: WorkgroupSize; count: (workload: readonly number[]) => WorkgroupCount }
> = {
  matmul: { size: [16, 16, 1], count: matmulCount },
  linear: { size: [16, 16, 1], count: matmulCount },
  matmul_relu_grad: { size: [16, 16, 1], count: matmulCount },
  bias_add: { size: [WGSL_WORKGROUP, 1, 1], count: linear(WGSL_WORKGROUP) },
  relu: { size: [WGSL_WORKGROUP, 1, 1], count: linear(WGSL_WORKGROUP) },
  relu_grad: { size: [WGSL_WORKGROUP, 1, 1], count: linear(WGSL_WORKGROUP) },
  softmax_ce: { size: [WGSL_SOFTMAX_WORKGROUP, 1, 1], count: linear(WGSL_SOFTMAX_WORKGROUP) },
  loss_mean: { size: [WGSL_WORKGROUP, 1, 1], count: () => [1, 1, 1] },
  colsum: { size: [WGSL_WORKGROUP, 1, 1], count: linear(WGSL_WORKGROUP) },
  sgd: { size: [WGSL_WORKGROUP, 1, 1], count: linear(WGSL_WORKGROUP) },
  bias_grad_sgd: { size: [WGSL_WORKGROUP, 1, 1], count: linear(WGSL_WORKGROUP) },
};

/** One descriptor per MLP kernel, in MLP_KERNEL_NAMES order. */
export const MLP_WEBGPU_EXPORTS: readonly ExportDescriptor[] = Object.freeze(
  MLP_KERNEL_NAMES.map((name) => ({
    name,
    ...MLP_KERNEL_SIGNATURES[name],
    workgroupSize: shapes[name].size,
    workgroupCount: shapes[name].count,
  })),
);

/** The executable source of the MLP's WebGPU kernels. */
export function mlpWgslExecutableSource(): WgslExecutableSource {
  return { format: 'wgsl', code: MLP_WGSL, exports: MLP_WEBGPU_EXPORTS, label: 'keel mlp (wgsl)' };
}
