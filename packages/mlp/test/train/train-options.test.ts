/** Issue 15: trainMlp refuses bad options instead of guessing (moved from the umbrella's tests). */
import { KeelError } from '@keel/fence';
import { describe, expect, it } from 'vitest';
import { trainMlp } from '../../src/train/train-mlp';
import type { TrainMlpOptions } from '../../src/train/train-options';

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
      ['cpu', /trainMlp: options must be an object, got "cpu"/],
    ];
    for (const [options, message] of cases) {
      const e = await rejection(trainMlp(options as TrainMlpOptions));
      expect(e.code).toBe('INVALID_ARGUMENT');
      expect(e.message).toMatch(message);
    }
  });
});
