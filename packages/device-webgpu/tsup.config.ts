import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base.ts';

const base = packageBuild();

// The declarations name WebGPU's global types (GPUDevice, ...): consumers get them from @webgpu/types.
export default defineConfig({ ...base, dts: { banner: '/// <reference types="@webgpu/types" />' } });
