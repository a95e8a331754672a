/**
 * The scheduler over the WebGPU device (Dawn; lavapipe on CPU-only machines): the forward-progress
 * program on one and two logical queues, and a CPU → GPU → CPU pipeline behind one scheduler.
 */

import { createWebGpuDevice } from '@keel/device-webgpu';
import { ErrorCode, Fence, KeelError } from '@keel/fence';
import type { Device, Executable } from '@keel/hal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyAcrossDevices, Scheduler, targetsOf } from '../src/index';
import { MIX_WGSL } from './fixtures/mix.wgsl';
import { cpuDevice, mixExecutable, nextFence, readBack, USAGE } from './helpers';
import { BUFFERS, generate, hex, model, runProgram } from './random-program';

/** WebGPU or the reason it is missing; under CI a missing adapter fails (CI installs lavapipe). */
async function probe(): Promise<string | undefined> {
  try {
    const device = await createWebGpuDevice({ queueCount: 1 });
    await device.destroy();
    return undefined;
  } catch (error) {
    const ci = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';
    if (ci || !KeelError.is(error, ErrorCode.UNAVAILABLE)) throw error;
    return error.message;
  }
}

const missing = await probe();

describe.skipIf(missing !== undefined)(
  `scheduler on WebGPU${missing === undefined ? '' : ` (skipped: ${missing})`}`,
  () => {
    let gpu1: Device;
    let gpu2: Device;
    let exe1: Executable;
    let exe2: Executable;

    beforeAll(async () => {
      gpu1 = await createWebGpuDevice({ queueCount: 1, label: 'gpu-1q' });
      gpu2 = await createWebGpuDevice({ queueCount: 2, label: 'gpu-2q' });
      exe1 = await gpu1.createExecutable(MIX_WGSL);
      exe2 = await gpu2.createExecutable(MIX_WGSL);
    });
    afterAll(async () => {
      await gpu1?.destroy();
      await gpu2?.destroy();
    });

    it('computes the same bytes on one queue, two queues and random masks', async () => {
      for (const seed of [11, 12]) {
        const ops = generate(seed);
        const expected = model(ops);
        const a = await runProgram(gpu1, exe1, new Scheduler(targetsOf(gpu1)), ops, false);
        const spread = new Scheduler(targetsOf(gpu2));
        const b = await runProgram(gpu2, exe2, spread, ops, false);
        const c = await runProgram(gpu2, exe2, new Scheduler(targetsOf(gpu2)), ops, true);
        for (let i = 0; i < BUFFERS; i++) {
          expect(hex(a[i]!), `seed ${seed} buffer ${i}: one queue vs model`).toBe(hex(expected[i]!));
          expect(hex(b[i]!), `seed ${seed} buffer ${i}: two queues vs one`).toBe(hex(a[i]!));
          expect(hex(c[i]!), `seed ${seed} buffer ${i}: random masks vs one`).toBe(hex(a[i]!));
        }
        expect(spread.stats().targets.every((t) => t.submitted > 0)).toBe(true);
      }
    }, 120_000);

    it('runs a CPU → GPU → CPU pipeline behind one scheduler, each step on its device', async () => {
      const cpu = await cpuDevice(2);
      try {
        const cpuMix = await mixExecutable(cpu);
        const scheduler = new Scheduler(targetsOf(cpu, gpu2), { trace: true });
        const cpuTargets = scheduler.targetsOfDevice(cpu);
        const gpuTargets = scheduler.targetsOfDevice(gpu2);
        expect([cpuTargets, gpuTargets]).toEqual([0b0011, 0b1100]);
        const words = 1024;
        const bytes = words * 4;
        const [hostA, hostB, hostOut] = [0, 1, 2].map((i) =>
          cpu.createBuffer({ usage: USAGE, byteLength: bytes, label: `cpu${i}` }),
        );
        const [devA, devB, devOut] = [0, 1, 2].map((i) =>
          gpu2.createBuffer({ usage: USAGE, byteLength: bytes, label: `gpu${i}` }),
        );
        const inputA = Uint32Array.from({ length: words }, (_, i) => i * 7 + 1);
        const inputB = Uint32Array.from({ length: words }, (_, i) => 0xabcdef ^ i);

        // Upload on the CPU device, move to the GPU, mix there, move back, mix again on the CPU.
        const wroteA = nextFence(cpu);
        const wroteB = nextFence(cpu);
        scheduler.submit({ kind: 'write', source: inputA, target: { buffer: hostA! } }, { signal: wroteA });
        scheduler.submit({ kind: 'write', source: inputB, target: { buffer: hostB! } }, { signal: wroteB });
        const onGpuA = nextFence(gpu2);
        const onGpuB = nextFence(gpu2);
        copyAcrossDevices(scheduler, { buffer: hostA! }, { buffer: devA! }, { wait: wroteA, signal: onGpuA });
        copyAcrossDevices(scheduler, { buffer: hostB! }, { buffer: devB! }, { wait: wroteB, signal: onGpuB });
        const gpuCb = gpu2.createCommandBuffer({ mode: 'one-shot' });
        gpuCb.begin();
        gpuCb.dispatch(exe2, 'mix', {
          workgroupCount: [words / 64, 1, 1],
          constants: [3],
          bindings: [{ buffer: devA! }, { buffer: devB! }, { buffer: devOut! }],
        });
        gpuCb.end();
        const mixed = nextFence(gpu2);
        const gpuTarget = scheduler.submit(
          { kind: 'execute', commandBuffers: [gpuCb] },
          { wait: Fence.join(onGpuA, onGpuB), signal: mixed },
        );
        expect(gpuTargets & (1 << gpuTarget)).not.toBe(0);
        // Both inputs were written by the write halves of the two copies: follow them.
        expect(['producer', 'join']).toContain(scheduler.trace().at(-1)!.reason);
        const back = nextFence(cpu);
        copyAcrossDevices(
          scheduler,
          { buffer: devOut! },
          { buffer: hostOut! },
          { wait: mixed, signal: back },
        );
        const cpuCb = cpu.createCommandBuffer({ mode: 'one-shot' });
        cpuCb.begin();
        cpuCb.dispatch(cpuMix, 'mix', {
          workgroupCount: [words / 64, 1, 1],
          constants: [5],
          bindings: [{ buffer: hostOut! }, { buffer: hostB! }, { buffer: hostA! }],
        });
        cpuCb.end();
        const done = nextFence(cpu);
        const cpuTarget = scheduler.submit(
          { kind: 'execute', commandBuffers: [cpuCb] },
          { wait: back, signal: done },
        );
        expect(cpuTargets & (1 << cpuTarget)).not.toBe(0);
        expect(scheduler.trace().at(-1)!.reason).toBe('producer');

        const result = new Uint32Array((await readBack(scheduler, hostA!, done)).buffer);
        const mix = (a: number, b: number, c: number): number => ((Math.imul(a, 0x9e3779b1) ^ b) + c) >>> 0;
        const expected = inputA.map((a, i) => mix(mix(a, inputB[i]!, 3), inputB[i]!, 5));
        expect(hex(new Uint8Array(result.buffer))).toBe(hex(new Uint8Array(expected.buffer)));
        // Every operation ran on its buffers' device: on the CPU 2 writes, 2 read halves, 1 write half,
        // 1 execute and the read-back; on the GPU 2 write halves, 1 execute and 1 read half.
        const perTarget = scheduler.stats().targets.map((t) => t.submitted);
        expect(perTarget[0]! + perTarget[1]!).toBe(7);
        expect(perTarget[2]! + perTarget[3]!).toBe(4);
        for (const buffer of [hostA, hostB, hostOut, devA, devB, devOut]) buffer!.destroy();
      } finally {
        await cpu.destroy();
      }
    }, 60_000);
  },
);
