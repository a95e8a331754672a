import { defineConfig } from 'tsup';
import { browserBuild, packageBuild } from '../../tsup.base.ts';

/**
 * dist/index.js (.cjs, .d.ts, .d.cts): the browser/default build, with src/platform/*.browser.ts (no
 * Dawn loading: navigator.gpu is the only WebGPU there). dist/index.node.js (.cjs): the `node`
 * condition, with src/platform/*.ts (Dawn through the optional `webgpu` package where there is no
 * navigator.gpu).
 *
 * The declarations name WebGPU's global types (GPUDevice, ...) through src/gpu-globals.ts, which merges
 * with whatever defines them in the consumer's setup (DOM lib or @webgpu/types) and never references
 * @webgpu/types itself.
 */
export default defineConfig([
  browserBuild({ index: 'src/index.ts' }, { formats: ['esm', 'cjs'], dts: true, clean: true }),
  { ...packageBuild({ 'index.node': 'src/index.ts' }), dts: false, clean: false, platform: 'node' },
]);
