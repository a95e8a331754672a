/** Issue 15: the Scheduler refuses bad options at creation and masks that are not 32-bit integers. */
import { Fence, KeelError } from '@keel/fence';
import type { Device } from '@keel/hal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Scheduler, type SchedulerOptions, targetsOf } from '../src/index';
import { cpuDevice } from './helpers';

function failure(fn: () => unknown): KeelError {
  try {
    fn();
  } catch (e) {
    if (KeelError.is(e)) return e;
    throw new Error(`not a KeelError: ${String(e)}`);
  }
  throw new Error('did not throw');
}

describe('Scheduler bad input', () => {
  let device: Device;
  beforeAll(async () => {
    device = await cpuDevice(2, 'sync');
  });
  afterAll(async () => {
    await device.destroy();
  });

  it('validates options with checkOptions', () => {
    const targets = targetsOf(device);
    expect(failure(() => new Scheduler(targets, { tracing: true } as SchedulerOptions)).message).toBe(
      "Scheduler: unknown option 'tracing' (known options: trace)",
    );
    expect(
      failure(() => new Scheduler(targets, { trace: 'yes' } as unknown as SchedulerOptions)).message,
    ).toBe(`Scheduler: option 'trace' must be a boolean or a positive integer, got "yes"`);
    expect(failure(() => new Scheduler(targets, { trace: 0 })).code).toBe('INVALID_ARGUMENT');
    expect(failure(() => new Scheduler(targets, 'trace' as unknown as SchedulerOptions)).message).toMatch(
      /Scheduler: options must be an object, got "trace"/,
    );
    expect(new Scheduler(targets, { trace: 8 }).targets.length).toBe(2);
  });

  it('refuses masks wider than 32 bits instead of truncating them', () => {
    const scheduler = new Scheduler(targetsOf(device));
    for (const affinity of [2 ** 32 + 1, 2 ** 33, 0.5]) {
      const e = failure(() => scheduler.submit({ kind: 'barrier' }, { affinity, wait: Fence.empty }));
      expect(e.code).toBe('INVALID_ARGUMENT');
      expect(e.message).toContain(`got ${affinity}`);
      expect(e.message).not.toContain('0x0');
    }
  });
});
