/**
 * Build step of the MLP's CPU kernels: compiles the generated WAT (src/cpu/wat.ts) to WebAssembly
 * with wabt (SIMD + threads), and an esbuild plugin that hands the bytes to the bundle as the module
 * `virtual:keel-mlp-gemm-wasm` (binary loader). The plugin also writes the `.wasm` and `.wat` next to the
 * bundle (`dist/kernels/mlp-gemm.{wasm,wat}`) for inspection; nothing binary is committed.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Options } from 'tsup';
import wabtInit from 'wabt';
import { DEFAULT_GEMM_OPTIONS, type GemmWatOptions, generateGemmWat } from '../src/cpu/wat';

type EsbuildPlugin = NonNullable<Options['esbuildPlugins']>[number];

/** The WAT and its compiled bytes for these GEMM sizes. */
export async function compileGemmWasm(
  options: GemmWatOptions = DEFAULT_GEMM_OPTIONS,
): Promise<{ wat: string; bytes: Uint8Array<ArrayBuffer> }> {
  const wabt = await wabtInit();
  const wat = generateGemmWat(options);
  const parsed = wabt.parseWat('mlp-gemm.wat', wat, { simd: true, threads: true });
  try {
    const bytes = new Uint8Array(parsed.toBinary({}).buffer);
    // Validates with the platform's own compiler (wabt's validator ignores the parse features).
    new WebAssembly.Module(bytes);
    return { wat, bytes };
  } finally {
    parsed.destroy();
  }
}

const VIRTUAL = /^virtual:keel-mlp-gemm-wasm$/;

/** The esbuild plugin resolving `virtual:keel-mlp-gemm-wasm`; `outDir` receives the inspection copies. */
export function mlpWasmPlugin(outDir: string): EsbuildPlugin {
  return {
    name: 'keel-mlp-gemm-wasm',
    setup(build) {
      build.onResolve({ filter: VIRTUAL }, (args) => ({ path: args.path, namespace: 'keel-mlp-gemm-wasm' }));
      build.onLoad({ filter: /.*/, namespace: 'keel-mlp-gemm-wasm' }, async () => {
        const { wat, bytes } = await compileGemmWasm();
        await mkdir(outDir, { recursive: true });
        await writeFile(path.join(outDir, 'mlp-gemm.wasm'), bytes);
        await writeFile(path.join(outDir, 'mlp-gemm.wat'), wat);
        return { contents: bytes, loader: 'binary' };
      });
    },
  };
}
