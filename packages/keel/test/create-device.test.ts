/** Issue 15: the umbrella's createDevice and trainMlp refuse bad options instead of guessing. */
import { KeelError } from '@keel/fence';
import { describe, expect, it } from 'vitest';
import { createDevice } from '../src/create-device';
import { trainMlp } from '../src/demo/train-mlp';
import type { TrainMlpOptions } from '../src/demo/train-options';

async function rejection(promise: Promise<unknown>): Promise<KeelError> {
  try {
    await promise;
  } catch (e) {
    if (KeelError.is(e)) return e;
    throw new Error(`not a KeelError: ${String(e)}`);
  }
  throw new Error('did not reject');
}

describe('createDevice', () => {
  it("refuses an unknown kind (kind 'tpu' made a CPU device)", async () => {
    const e = await rejection(createDevice({ kind: 'tpu' } as never));
    expect(e.code).toBe('INVALID_ARGUMENT');
    expect(e.message).toBe(`createDevice: option 'kind' must be one of 'cpu', 'webgpu', got "tpu"`);
  });

  it('refuses options that are not an object, and bad CPU options', async () => {
    expect((await rejection(createDevice('cpu' as never))).message).toMatch(
      /options must be an object.*got "cpu"/,
    );
    expect((await rejection(createDevice({ kind: 'cpu', queues: 0 }))).message).toMatch(/option 'queues'/);
    expect((await rejection(createDevice({ kind: 'cpu', mood: 'sync' } as never))).message).toMatch(
      /unknown option 'mood'/,
    );
  });

  it('opens a CPU device with documented options', async () => {
    const device = await createDevice({ kind: 'cpu', mode: 'sync', queues: 1 });
    expect(device.info.backend).toBe('cpu');
    await device.destroy();
  });
});

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
