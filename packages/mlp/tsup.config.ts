import { defineConfig } from 'tsup';
import { browserBuild, packageBuild } from '../../tsup.base.ts';
import { mlpWasmPlugin } from './scripts/mlp-wasm.ts';

/**
 * dist/index.js (.cjs, .d.ts, .d.cts): the browser/default build, with src/platform/*.browser.ts (no
 * Node built-ins), so dist/index.js bundles for the browser as it is. dist/index.node.js (.cjs): the
 * `node` condition, with src/platform/*.ts (node:os). Both sit in dist/, beside dist/kernels/, so the
 * literal `new URL('./kernels/mlp-cpu.js', import.meta.url)` finds the kernel module from either.
 */
export default defineConfig([
  browserBuild(
    { index: 'src/index.ts' },
    { formats: ['esm', 'cjs'], dts: true, clean: true, importMetaUrl: true },
  ),
  {
    ...packageBuild({ 'index.node': 'src/index.ts' }, { importMetaUrl: true }),
    dts: false,
    clean: false,
    platform: 'node',
  },
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
