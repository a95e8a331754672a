/**
 * Export descriptors of the MLP's CPU executable (a `js-module` source whose module is the built
 * `dist/kernels/mlp-cpu.js`, see kernels.ts): the interface of ../kernel-interface.ts plus the CPU's
 * workgroup counts. Counts are only a default split: every kernel derives its share from the count it
 * is dispatched with, so a caller may pass `{ workgroupCount }` directly (e.g. one per worker).
 */
import type { ExportDescriptor, JsModuleExecutableSource, WorkgroupCount } from '@keel/hal';
import { MLP_KERNEL_NAMES, MLP_KERNEL_SIGNATURES, type MlpKernelName } from '../kernel-interface';

/**
 * Default GEMM tile of one CPU workgroup: rows of C × columns of C. Full width up to 512 columns:
 * every workgroup packs (or, on the copy path, copies) its rows of A and all of its columns of B, so
 * splitting columns only multiplies A's packing, and full-width tiles make the copy path's B and C
 * transfers contiguous (one `set` each). Rows: up to 256, and the row tile count is even and at least
 * 2 once C has more than 64 rows (the rows are then shared equally), so two workers always get equal
 * halves of every GEMM: on the copy path (the CPU device's) every tile copies all of B, so fewer,
 * taller tiles copy and pack less. Measured on the reference step (1 thread, CPU time, relaxed-SIMD
 * GEMM, copy path, 2026-11-24): 17.7 ms with 64-row tiles (the previous default), 16.3 ms with 128,
 * 15.7 ms with 256 (784 rows: 4 tiles of 196). Devices with many workers can pass a larger
 * `workgroupCount` directly.
 */
export const CPU_MATMUL_TILE = Object.freeze({ rows: 256, cols: 512 });
/** Elements per workgroup of the elementwise kernels. */
export const CPU_ELEMENTS_PER_WORKGROUP = 16384;
/** Rows per workgroup of softmax_ce. */
export const CPU_ROWS_PER_WORKGROUP = 64;
/** Columns per workgroup of colsum and bias_grad_sgd. */
export const CPU_COLUMNS_PER_WORKGROUP = 128;

const ceilDiv = (a: number, b: number): number => Math.max(1, Math.ceil(a / b));

function linearCount(per: number): (workload: readonly number[]) => WorkgroupCount {
  return (workload) => [ceilDiv(workload[0] ?? 1, per), 1, 1];
}

/** Row tiles: 1 up to 64 rows, else an even count ≥ 2 of at most CPU_MATMUL_TILE.rows rows each. */
function rowTiles(rows: number): number {
  if (rows <= 64) return 1;
  const n = Math.max(2, Math.ceil(rows / CPU_MATMUL_TILE.rows));
  return n + (n & 1);
}

const matmulCount = (workload: readonly number[]): WorkgroupCount => [
  ceilDiv(workload[0] ?? 1, CPU_MATMUL_TILE.cols),
  rowTiles(workload[1] ?? 1),
  1,
];

const counts: Record<MlpKernelName, (workload: readonly number[]) => WorkgroupCount> = {
  matmul: matmulCount,
  linear: matmulCount,
  matmul_relu_grad: matmulCount,
  bias_add: linearCount(CPU_ELEMENTS_PER_WORKGROUP),
  relu: linearCount(CPU_ELEMENTS_PER_WORKGROUP),
  relu_grad: linearCount(CPU_ELEMENTS_PER_WORKGROUP),
  softmax_ce: linearCount(CPU_ROWS_PER_WORKGROUP),
  loss_mean: () => [1, 1, 1],
  colsum: linearCount(CPU_COLUMNS_PER_WORKGROUP),
  sgd: linearCount(CPU_ELEMENTS_PER_WORKGROUP),
  bias_grad_sgd: linearCount(CPU_COLUMNS_PER_WORKGROUP),
  matmul_bias_grad: matmulCount,
  softmax_ce_loss: () => [1, 1, 1],
};

/** One descriptor per MLP kernel, in MLP_KERNEL_NAMES order. */
export const MLP_CPU_EXPORTS: readonly ExportDescriptor[] = Object.freeze(
  MLP_KERNEL_NAMES.map((name) => ({ name, ...MLP_KERNEL_SIGNATURES[name], workgroupCount: counts[name] })),
);

/** Path of the built kernel module relative to the package's `dist/` directory. */
export const MLP_CPU_MODULE_PATH = 'kernels/mlp-cpu.js';

/**
 * The executable source of the MLP's CPU kernels. `url` defaults to the built module next to the
 * bundle this code runs from (`dist/kernels/mlp-cpu.js` when running from `dist/index.js`); pass it
 * explicitly when running from sources.
 */
export function mlpCpuExecutableSource(
  url: string | URL = new URL('./kernels/mlp-cpu.js', import.meta.url), // literal: bundlers copy the asset
): JsModuleExecutableSource {
  return { format: 'js-module', url, exports: MLP_CPU_EXPORTS, label: 'keel mlp (wasm simd)' };
}
