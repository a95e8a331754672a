/** Issue 15: the umbrella's createDevice refuses bad options instead of guessing (trainMlp's: @keel/mlp). */
import { KeelError } from '@keel/fence';
import { describe, expect, it } from 'vitest';
import { createDevice } from '../src/create-device';

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
