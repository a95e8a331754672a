import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base.ts';

// The declarations name WebGPU's global types (GPUDevice, ...) through src/gpu-globals.ts, which merges
// with whatever defines them in the consumer's setup (DOM lib or @webgpu/types) and never references
// @webgpu/types itself.
export default defineConfig(packageBuild());
