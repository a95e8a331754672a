/**
 * The MLP's CPU kernel module: the ES module the CPU device loads by URL in every worker (built to
 * `dist/kernels/mlp-cpu.js`, with the WebAssembly GEMM embedded), one kernel function per export of
 * ../kernel-interface.ts following the device's kernel ABI. It compiles the GEMM once per thread (top-level
 * await) and imports nothing from Node, so it runs in worker threads and in browsers alike.
 *
 * Two builds of the GEMM are embedded: relaxed SIMD (`f32x4.relaxed_madd`, a fused multiply-add) and
 * plain SIMD. The relaxed one is used where `WebAssembly.validate` accepts it (Chromium ≥ 114,
 * Node ≥ 22; Node 20 only with V8's `--experimental-wasm-relaxed-simd`), the plain one otherwise.
 */
import gemmWasm from 'virtual:keel-mlp-gemm-wasm';
import relaxedGemmWasm from 'virtual:keel-mlp-gemm-wasm-relaxed';
import { createMlpCpuKernels } from './create-kernels';
import { chooseGemm, type GemmVariant } from './gemm-variant';

const chosen = chooseGemm(relaxedGemmWasm, gemmWasm);
/** Which GEMM this thread runs: 'relaxed-simd' (fused multiply-add) or 'simd'. */
export const gemmVariant: GemmVariant = chosen.variant;

const kernels = createMlpCpuKernels(await WebAssembly.compile(chosen.bytes));

export const matmul = kernels.matmul;
export const linear = kernels.linear;
export const matmul_relu_grad = kernels.matmul_relu_grad;
export const bias_add = kernels.bias_add;
export const relu = kernels.relu;
export const relu_grad = kernels.relu_grad;
export const softmax_ce = kernels.softmax_ce;
export const loss_mean = kernels.loss_mean;
export const colsum = kernels.colsum;
export const sgd = kernels.sgd;
export const bias_grad_sgd = kernels.bias_grad_sgd;
export const matmul_bias_grad = kernels.matmul_bias_grad;
export const softmax_ce_loss = kernels.softmax_ce_loss;
/** Per-path tile counters of this thread (zero-copy vs copied). */
export const stats = kernels.stats;
