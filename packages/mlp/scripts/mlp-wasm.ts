/**
 * Build step of the MLP's CPU kernels: compiles the generated WAT (src/cpu/wat.ts) to WebAssembly
 * with wabt (SIMD + threads, plus relaxed SIMD for the fused multiply-add variant), and an esbuild
 * plugin that hands the bytes to the bundle as the modules `virtual:keel-mlp-gemm-wasm` (plain SIMD)
 * and `virtual:keel-mlp-gemm-wasm-relaxed` (relaxed SIMD) (binary loader). The plugin also writes the
 * `.wasm` and `.wat` next to the bundle (`dist/kernels/mlp-gemm{,-relaxed}.{wasm,wat}`) for
 * inspection; nothing binary is committed.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Options } from 'tsup';
import wabtInit from 'wabt';
import {
  DEFAULT_GEMM_OPTIONS,
  type GemmWatOptions,
  generateGemmWat,
  RELAXED_GEMM_OPTIONS,
} from '../src/cpu/wat';

type EsbuildPlugin = NonNullable<Options['esbuildPlugins']>[number];

/** The WAT and its compiled bytes for these GEMM sizes. */
export async function compileGemmWasm(
  options: GemmWatOptions = DEFAULT_GEMM_OPTIONS,
): Promise<{ wat: string; bytes: Uint8Array<ArrayBuffer> }> {
  const wabt = await wabtInit();
  const wat = generateGemmWat(options);
  const parsed = wabt.parseWat('mlp-gemm.wat', wat, { simd: true, threads: true, relaxed_simd: true });
  try {
    const bytes = new Uint8Array(parsed.toBinary({}).buffer);
    // Validates with the platform's own compiler (wabt's validator ignores the parse features), unless
    // the module needs relaxed SIMD and this engine lacks it (Node 20 without its V8 flag).
    if (!options.fma || relaxedSimdSupported()) new WebAssembly.Module(bytes);
    return { wat, bytes };
  } finally {
    parsed.destroy();
  }
}

/** A minimal module using `f32x4.relaxed_madd`: validates only where the engine has relaxed SIMD. */
export const RELAXED_SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 8, 1, 96, 3, 123, 123, 123, 1, 123, 3, 2, 1, 0, 10, 13, 1, 11, 0, 32, 0, 32,
  1, 32, 2, 253, 133, 2, 11,
]);

/** Whether this engine compiles relaxed SIMD. */
export function relaxedSimdSupported(): boolean {
  return WebAssembly.validate(RELAXED_SIMD_PROBE);
}

const VIRTUAL = /^virtual:keel-mlp-gemm-wasm(-relaxed)?$/;

/** The esbuild plugin resolving `virtual:keel-mlp-gemm-wasm`; `outDir` receives the inspection copies. */
export function mlpWasmPlugin(outDir: string): EsbuildPlugin {
  return {
    name: 'keel-mlp-gemm-wasm',
    setup(build) {
      build.onResolve({ filter: VIRTUAL }, (args) => ({ path: args.path, namespace: 'keel-mlp-gemm-wasm' }));
      build.onLoad({ filter: /.*/, namespace: 'keel-mlp-gemm-wasm' }, async (args) => {
        const relaxed = args.path.endsWith('-relaxed');
        const { wat, bytes } = await compileGemmWasm(relaxed ? RELAXED_GEMM_OPTIONS : DEFAULT_GEMM_OPTIONS);
        const name = relaxed ? 'mlp-gemm-relaxed' : 'mlp-gemm';
        await mkdir(outDir, { recursive: true });
        await writeFile(path.join(outDir, `${name}.wasm`), bytes);
        await writeFile(path.join(outDir, `${name}.wat`), wat);
        return { contents: bytes, loader: 'binary' };
      });
    },
  };
}
