/**
 * `trainMlp` on WebGPU once warm: the host creates no GPU objects between steps (no bind group, no
 * buffer: binding tables resolve to cached bind groups, staging and the arena are reused), defers no
 * queue operation (every one, the loss read included, is submitted at its call, so nothing waits for
 * a host round trip before reaching the GPUQueue), uploads each batch with one write, and makes at
 * most one `queue.submit` and three `popErrorScope` calls per step (a step's write, execute and loss
 * read share one submission batch: device-webgpu op-scheduler.ts § Batching), counted on the
 * GPUDevice and in the device's stats, with the shipped tiling of the adapter and with the
 * workgroup-memory GPU tiling, whose losses match.
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
      it(`creates no bind group or buffer, and submits once with three scope pops per step, after the warm-up steps (tiling ${gemmTilingName(tiling)})`, async () => {
        const adapter = await (gpu as GPU).requestAdapter();
        const raw = await adapter!.requestDevice();
        const counts = { bindGroups: 0, buffers: 0, submits: 0, pops: 0, statSubmits: 0, statPops: 0 };
        const createBindGroup = raw.createBindGroup.bind(raw);
        const createBuffer = raw.createBuffer.bind(raw);
        const submit = raw.queue.submit.bind(raw.queue);
        const popErrorScope = raw.popErrorScope.bind(raw);
        raw.queue.submit = (list) => {
          counts.submits++;
          submit(list);
        };
        raw.popErrorScope = () => {
          counts.pops++;
          return popErrorScope();
        };
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
        const snapshot = () => {
          const stats = device.stats;
          return {
            ...counts,
            deferred: stats.deferred,
            statSubmits: stats.submissions,
            statPops: stats.errorScopePops,
          };
        };
        let atWarm = snapshot();
        let atLast = snapshot();
        try {
          const r = await trainMlp({
            device,
            steps,
            warmup: 2,
            pregeneratedBatches: 4,
            wgslTiling: tiling,
            onStep: (p) => {
              if (p.step === warm) atWarm = snapshot();
              if (p.step === steps) atLast = snapshot();
            },
          });
          expect(counts.bindGroups).toBeGreaterThan(0);
          // Steps 5..10 (the last one's loss included) after the warm-up: nothing created.
          expect(atLast.bindGroups - atWarm.bindGroups).toBe(0);
          expect(atLast.buffers - atWarm.buffers).toBe(0);
          // No operation deferred: each step's loss read waits only for its own execute (GPU order),
          // not for the previous step's read to reach the host.
          expect(atLast.deferred - atWarm.deferred).toBe(0);
          // One submission batch per step: ≤ 1 queue.submit and ≤ 3 error-scope pops (the three
          // scopes around the batch), on the GPUDevice and in the device's own counters.
          const n = steps - warm;
          expect(atLast.submits - atWarm.submits).toBeLessThanOrEqual(n);
          expect(atLast.pops - atWarm.pops).toBeLessThanOrEqual(3 * n);
          expect(atLast.statSubmits - atWarm.statSubmits).toBe(atLast.submits - atWarm.submits);
          expect(atLast.statPops - atWarm.statPops).toBe(atLast.pops - atWarm.pops);
          expect(atLast.submits - atWarm.submits).toBeGreaterThan(0);
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
