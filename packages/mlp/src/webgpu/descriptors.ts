/**
 * Export descriptors of the MLP's WebGPU executable (the WGSL of wgsl.ts): the interface of
 * ../kernel-interface.ts plus WebGPU workgroup sizes and counts. Counts stay within 65535 per
 * dimension (the kernels walk grid-stride, so a capped count still covers the whole workload).
 */
import type { ExportDescriptor, WgslExecutableSource, WorkgroupCount, WorkgroupSize } from '@keel/hal';
import { MLP_KERNEL_NAMES, MLP_KERNEL_SIGNATURES, type MlpKernelName } from '../kernel-interface';
import {
  checkGemmTiling,
  type GemmEntry,
  type GemmTiling,
  gemmTilingName,
  gemmTilingOf,
  gemmWorkgroupSize,
  usesWorkgroupMemory,
  WGSL_GEMM_TILING,
} from './gemm-tiling';
import { type ReductionShape, reductionShapes } from './reductions';
import { gemmTiles, MLP_WGSL, mlpWgsl, WGSL_WORKGROUP } from './wgsl';

const MAX_COUNT = 65535;
const ceilDiv = (a: number, b: number): number => Math.min(MAX_COUNT, Math.max(1, Math.ceil(a / b)));

function linear(per: number): (workload: readonly number[]) => WorkgroupCount {
  return (workload) => [ceilDiv(workload[0] ?? 1, per), 1, 1];
}

/** The descriptors of the MLP's WGSL module generated with GEMM tiling `t` (`mlpWgsl(t)`). */
export function mlpWebgpuExports(t: GemmTiling = WGSL_GEMM_TILING): readonly ExportDescriptor[] {
  checkGemmTiling(t);
  // One workgroup per tile of C (workload [N, M]; per-shape tilings: tiles of the tiling N picks;
  // per-kernel tilings: each entry point's own tiling and workgroup size); the kernels walk tiles over
  // the whole grid. matmul_bias_grad with workgroup memory counts one more row of C (the ones row).
  const gemm = (entry: GemmEntry) => ({
    size: [gemmWorkgroupSize(gemmTilingOf(t, entry)), 1, 1] as WorkgroupSize,
    count: (workload: readonly number[]): WorkgroupCount => {
      const extraRow = entry === 'matmul_bias_grad' && usesWorkgroupMemory(t) ? 1 : 0;
      return [ceilDiv(gemmTiles(t, (workload[1] ?? 1) + extraRow, workload[0] ?? 1, entry), 1), 1, 1];
    },
  });
  // Reductions: parallel (workgroup memory) with the GPU tilings, serial with the CPU adapters' ones.
  const reductions = reductionShapes(usesWorkgroupMemory(t));
  const reduction = (r: ReductionShape) => ({ size: r.size as WorkgroupSize, count: linear(r.per) });
  const shapes: Record<
    MlpKernelName,
    { size: WorkgroupSize; count: (workload: readonly number[]) => WorkgroupCount }
  > = {
    matmul: gemm('matmul'),
    linear: gemm('linear'),
    matmul_relu_grad: gemm('matmul_relu_grad'),
    bias_add: { size: [WGSL_WORKGROUP, 1, 1], count: linear(WGSL_WORKGROUP) },
    relu: { size: [WGSL_WORKGROUP, 1, 1], count: linear(WGSL_WORKGROUP) },
    relu_grad: { size: [WGSL_WORKGROUP, 1, 1], count: linear(WGSL_WORKGROUP) },
    softmax_ce: reduction(reductions.softmax_ce),
    loss_mean: { size: [WGSL_WORKGROUP, 1, 1], count: () => [1, 1, 1] },
    colsum: reduction(reductions.colsum),
    sgd: { size: [WGSL_WORKGROUP, 1, 1], count: linear(WGSL_WORKGROUP) },
    bias_grad_sgd: reduction(reductions.bias_grad_sgd),
    matmul_bias_grad: gemm('matmul_bias_grad'),
    softmax_ce_loss: { size: [WGSL_WORKGROUP, 1, 1], count: () => [1, 1, 1] },
  };
  return Object.freeze(
    MLP_KERNEL_NAMES.map((name) => ({
      name,
      ...MLP_KERNEL_SIGNATURES[name],
      workgroupSize: shapes[name].size,
      workgroupCount: shapes[name].count,
    })),
  );
}

/** One descriptor per MLP kernel, in MLP_KERNEL_NAMES order. */
export const MLP_WEBGPU_EXPORTS: readonly ExportDescriptor[] = mlpWebgpuExports();

/**
 * The executable source of the MLP's WebGPU kernels, with the GEMMs generated for `tiling` (default
 * WGSL_GEMM_TILING, the shipped kernels).
 */
export function mlpWgslExecutableSource(tiling: GemmTiling = WGSL_GEMM_TILING): WgslExecutableSource {
  if (tiling === WGSL_GEMM_TILING) {
    return { format: 'wgsl', code: MLP_WGSL, exports: MLP_WEBGPU_EXPORTS, label: 'keel mlp (wgsl)' };
  }
  checkGemmTiling(tiling);
  const label = `keel mlp (wgsl, ${gemmTilingName(tiling)})`;
  return { format: 'wgsl', code: mlpWgsl(tiling), exports: mlpWebgpuExports(tiling), label };
}
