import { defineConfig } from 'tsup';
import { browserBuild, packageBuild } from '../../tsup.base.ts';
import { mlpWasmPlugin } from './scripts/mlp-wasm.ts';

export default defineConfig([
  packageBuild({ index: 'src/index.ts' }),
  // The `browser` condition: the same entry with src/platform/*.browser.ts (no Node built-ins).
  browserBuild(),
  // The CPU kernel module (loaded by URL in CPU device workers), with the WebAssembly GEMM built in.
  {
    ...packageBuild({ 'kernels/mlp-cpu': 'src/cpu/kernels.ts' }, { formats: ['esm'] }),
    dts: false,
    clean: false,
    platform: 'neutral', // runs in Node workers and browsers alike (no Buffer in the embedded bytes' decoder)
    // Self-contained: bundlers and servers copy this file as an asset, so no bare import may remain
    // (what it uses of @keel/hal is inlined; the rest tree-shakes away).
    noExternal: [/^@keel\//],
    esbuildPlugins: [mlpWasmPlugin('dist/kernels')],
  },
]);
