/**
 * `trainMlp` on WebGPU once warm: the host creates no GPU objects between steps (no bind group, no
 * buffer: binding tables resolve to cached bind groups, staging and the arena are reused), defers no
 * queue operation (every one, the loss read included, is submitted at its call, so nothing waits for
 * a host round trip before reaching the GPUQueue) and uploads each batch with one write, with the
 * shipped tiling of the adapter and with the workgroup-memory GPU tiling, whose losses match.
 * Skipped where there is no adapter, except under CI.
 */
import { createWebGpuDevice } from '@keel/device-webgpu';
import { describe, expect, it } from 'vitest';
import { trainMlp } from '../../src/train/train-mlp';
import { gemmTilingName, WGSL_GEMM_TILING, WGSL_GEMM_TILING_GPU } from '../../src/webgpu/gemm-tiling';

const gpu = await import('webgpu').then(
  async (webgpu) => {
    Object.assign(globalThis, webgpu.globals);
    const g = webgpu.create([]);
    return (await g.requestAdapter()) === null ? 'no WebGPU adapter' : g;
  },
  (error: unknown) => `the 'webgpu' package does not load (${String(error)})`,
);
if (typeof gpu === 'string' && process.env.CI) throw new Error(`WebGPU is required under CI: ${gpu}`);

describe.skipIf(typeof gpu === 'string')(
  `trainMlp on WebGPU once warm${typeof gpu === 'string' ? ` (skipped: ${gpu})` : ''}`,
  { timeout: 240_000 },
  () => {
    const losses = new Map<string, Float32Array>();
    for (const tiling of [WGSL_GEMM_TILING, WGSL_GEMM_TILING_GPU]) {
      it(`creates no bind group or buffer after the warm-up steps (tiling ${gemmTilingName(tiling)})`, async () => {
        const adapter = await (gpu as GPU).requestAdapter();
        const raw = await adapter!.requestDevice();
        const counts = { bindGroups: 0, buffers: 0 };
        const createBindGroup = raw.createBindGroup.bind(raw);
        const createBuffer = raw.createBuffer.bind(raw);
        raw.createBindGroup = (d) => {
          counts.bindGroups++;
          return createBindGroup(d);
        };
        raw.createBuffer = (d) => {
          counts.buffers++;
          return createBuffer(d);
        };
        const device = await createWebGpuDevice({ device: raw, queueCount: 2 });
        // The byte length of every queueWrite (batches: x and labels packed in one write).
        const writes: number[] = [];
        const queueWrite = device.queueWrite.bind(device);
        device.queueWrite = (...args: Parameters<typeof queueWrite>) => {
          writes.push(args[3].byteLength);
          queueWrite(...args);
        };
        const steps = 10;
        const warm = 4;
        let atWarm = { ...counts, deferred: 0 };
        let atLast = { ...counts, deferred: 0 };
        try {
          const r = await trainMlp({
            device,
            steps,
            warmup: 2,
            pregeneratedBatches: 4,
            wgslTiling: tiling,
            onStep: (p) => {
              if (p.step === warm) atWarm = { ...counts, deferred: device.stats.deferred };
              if (p.step === steps) atLast = { ...counts, deferred: device.stats.deferred };
            },
          });
          expect(counts.bindGroups).toBeGreaterThan(0);
          // Steps 5..10 (the last one's loss included) after the warm-up: nothing created.
          expect(atLast.bindGroups - atWarm.bindGroups).toBe(0);
          expect(atLast.buffers - atWarm.buffers).toBe(0);
          // No operation deferred: each step's loss read waits only for its own execute (GPU order),
          // not for the previous step's read to reach the host.
          expect(atLast.deferred - atWarm.deferred).toBe(0);
          // One write per batch (x, padding to 256 bytes, labels), never x and labels apart.
          const [xBytes, labelsBytes] = [256 * 784 * 4, 256 * 4];
          expect(writes.filter((n) => n === xBytes || n === labelsBytes)).toEqual([]);
          expect(writes.filter((n) => n === xBytes + labelsBytes)).toHaveLength(steps);
          expect(r.losses[steps - 1]!).toBeLessThan(r.losses[0]!);
          losses.set(gemmTilingName(tiling), r.losses);
        } finally {
          await device.destroy();
          raw.destroy();
        }
      });
    }

    it('both tilings train the same losses', () => {
      const [a, b] = [...losses.values()];
      expect(a).toBeDefined();
      expect(b).toBeDefined();
      for (let k = 0; k < a!.length; k++) expect(b![k]).toBeCloseTo(a![k]!, 3);
    });
  },
);
