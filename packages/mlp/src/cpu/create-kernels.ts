/**
 * Builds the full set of MLP CPU kernels (one function per export of ../kernel-interface.ts) over a
 * compiled GEMM module. The worker entry (kernels.ts) calls it once per thread; tests call it directly.
 */

import type { MlpKernelName } from '../kernel-interface';
import * as elementwise from './elementwise-kernels';
import type { MlpCpuKernel } from './kernel-context';
import { createMatmulKernels, type MatmulKernelOptions, type MatmulKernelStats } from './matmul-kernels';

export type MlpCpuKernels = Readonly<Record<MlpKernelName, MlpCpuKernel>> & {
  readonly stats: MatmulKernelStats;
};

export function createMlpCpuKernels(
  module: WebAssembly.Module,
  options: MatmulKernelOptions = {},
): MlpCpuKernels {
  const matmul = createMatmulKernels(module, options);
  return {
    stats: matmul.stats,
    matmul: matmul.matmul,
    linear: matmul.linear,
    matmul_relu_grad: matmul.matmul_relu_grad,
    bias_add: elementwise.bias_add,
    relu: elementwise.relu,
    relu_grad: elementwise.relu_grad,
    softmax_ce: elementwise.softmax_ce,
    loss_mean: elementwise.loss_mean,
    colsum: elementwise.colsum,
    sgd: elementwise.sgd,
    bias_grad_sgd: elementwise.bias_grad_sgd,
    matmul_bias_grad: matmul.matmul_bias_grad,
    softmax_ce_loss: elementwise.softmax_ce_loss,
  };
}
