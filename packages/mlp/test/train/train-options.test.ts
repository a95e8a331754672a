/**
 * Issue 15: trainMlp refuses bad options instead of guessing (moved from the umbrella's tests), before
 * opening a device or running a step: a `device` that is not a Keel Device, `traceOptions` that
 * `startTrace` would refuse.
 */
import { createCpuDevice } from '@keel/device-cpu';
import { KeelError } from '@keel/fence';
import { describe, expect, it } from 'vitest';
import { trainMlp } from '../../src/train/train-mlp';
import type { TrainMlpOptions } from '../../src/train/train-options';

const CPU_KERNELS = new URL('../../dist/kernels/mlp-cpu.js', import.meta.url);

async function rejection(promise: Promise<unknown>): Promise<KeelError> {
  try {
    await promise;
  } catch (e) {
    if (KeelError.is(e)) return e;
    throw new Error(`not a KeelError: ${String(e)}`);
  }
  throw new Error('did not reject');
}

describe('trainMlp options', () => {
  it('refuses unknown keys and wrong types before opening a device', async () => {
    const cases: [unknown, RegExp][] = [
      [{ step: 5 }, /trainMlp: unknown option 'step'/],
      [{ steps: '5' }, /trainMlp: option 'steps' must be an integer in \[1, 1000000\], got "5"/],
      [{ overlap: 'yes' }, /option 'overlap' must be a boolean, got "yes"/],
      [{ cpuMode: 'fast' }, /option 'cpuMode' must be one of 'sync', 'task', got "fast"/],
      [{ device: 'tpu' }, /option 'device' must be 'cpu', 'webgpu' or a Keel Device, got "tpu"/],
      [{ onStep: 1 }, /option 'onStep' must be a function, got 1/],
      [
        { wgslTiling: { kind: 'shared', bm: 48, bn: 32, bk: 16, tm: 4, tn: 4 } },
        /option 'wgslTiling': GEMM tiling .*bm must be a power of two, got 48/,
      ],
      [
        { wgslTiling: { kind: 'shared', bm: 128, bn: 128, bk: 16, tm: 4, tn: 4 } },
        /option 'wgslTiling': .*1024 invocations must be in \[4, 256\]/,
      ],
      [
        { wgslTiling: { wg: 0, tm: 1, tn: 1 } },
        /option 'wgslTiling': .*wg must be a positive integer, got 0/,
      ],
      ['cpu', /trainMlp: options must be an object, got "cpu"/],
    ];
    for (const [options, message] of cases) {
      const e = await rejection(trainMlp(options as TrainMlpOptions));
      expect(e.code).toBe('INVALID_ARGUMENT');
      expect(e.message).toMatch(message);
    }
  });

  it('refuses a device that is not a Keel Device with INVALID_ARGUMENT naming the option', async () => {
    const real = createCpuDevice({ mode: 'sync', queues: 2 });
    try {
      const fakes: unknown[] = [
        {},
        { info: {} },
        { info: { backend: 'cpu', queueCount: 2, name: 'x' } },
        // Everything but the methods: a copy of a real device's info.
        { info: real.info, lost: real.lost },
        [],
      ];
      for (const device of fakes) {
        const e = await rejection(
          trainMlp({ device, steps: 1, cpuKernelUrl: CPU_KERNELS } as unknown as TrainMlpOptions),
        );
        expect(e.code).toBe('INVALID_ARGUMENT');
        expect(e.message).toMatch(
          /^trainMlp: option 'device' must be 'cpu', 'webgpu' or a Keel Device, got /,
        );
      }
    } finally {
      await real.destroy();
    }
  });

  it('checks traceOptions with the other options, naming traceOptions, before any step', async () => {
    const cases: [object, RegExp][] = [
      [{ bogus: 1 }, /^trainMlp: option 'traceOptions': unknown option 'bogus'/],
      [{ maxEvents: -1 }, /^trainMlp: option 'traceOptions': option 'maxEvents' must be an integer in \[1, /],
      [{ gpuTimestamps: 'no' }, /^trainMlp: option 'traceOptions': option 'gpuTimestamps' must be a boolean/],
    ];
    for (const [traceOptions, message] of cases) {
      let started = false;
      let stepped = 0;
      const e = await rejection(
        trainMlp({
          steps: 30,
          batch: 16,
          cpuKernelUrl: CPU_KERNELS,
          traceSteps: 1,
          traceOptions: traceOptions as TrainMlpOptions['traceOptions'],
          onStart: () => {
            started = true;
          },
          onStep: () => {
            stepped++;
          },
        }),
      );
      expect(e.code).toBe('INVALID_ARGUMENT');
      expect(e.message).toMatch(message);
      expect(started).toBe(false);
      expect(stepped).toBe(0);
    }
  });
});
