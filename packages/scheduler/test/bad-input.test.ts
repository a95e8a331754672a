/**
 * Issue 15: the Scheduler refuses bad options at creation and masks that are not 32-bit integers.
 * Issue 17: submit options name their fence `signalFence`; `signal` is its deprecated alias.
 */
import { Fence, TimelineSemaphore } from '@keel/fence';
import { BufferUsage, type Device } from '@keel/hal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  copyAcrossDevices,
  Scheduler,
  type SchedulerOptions,
  type SubmitOptions,
  targetsOf,
} from '../src/index';
import { cpuDevice, failure } from './helpers';

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

  it('signals `signalFence`, and the deprecated alias `signal` the same way', async () => {
    const scheduler = new Scheduler(targetsOf(device));
    const a = new TimelineSemaphore(0);
    scheduler.submit({ kind: 'barrier' }, { signalFence: Fence.of({ semaphore: a, value: 1 }) });
    const b = new TimelineSemaphore(0);
    scheduler.submit({ kind: 'barrier' }, { signal: Fence.of({ semaphore: b, value: 1 }) });
    // Both naming the same fence is fine.
    const c = new TimelineSemaphore(0);
    const same = Fence.of({ semaphore: c, value: 1 });
    scheduler.submit({ kind: 'barrier' }, { signalFence: same, signal: same });
    await Fence.join(Fence.of({ semaphore: a, value: 1 }), Fence.of({ semaphore: b, value: 1 }), same).wait({
      timeoutMs: 5000,
    });
    // copyAcrossDevices passes either name on.
    const source = device.createBuffer({ byteLength: 16, usage: BufferUsage.DEFAULT });
    const target = device.createBuffer({ byteLength: 16, usage: BufferUsage.DEFAULT });
    for (const name of ['signalFence', 'signal'] as const) {
      const s = new TimelineSemaphore(0);
      const options: SubmitOptions = { [name]: Fence.of({ semaphore: s, value: 1 }) };
      copyAcrossDevices(scheduler, { buffer: source }, { buffer: target }, options);
      await s.wait(1, { timeoutMs: 5000 });
    }
    source.destroy();
    target.destroy();
  });

  it('refuses a signalFence or signal that is not a Fence, and the two naming different fences', () => {
    const scheduler = new Scheduler(targetsOf(device));
    const one = Fence.of({ semaphore: new TimelineSemaphore(0), value: 1 });
    const other = Fence.of({ semaphore: new TimelineSemaphore(0), value: 1 });
    const cases: [unknown, RegExp][] = [
      [
        { signalFence: {} },
        /Scheduler\.submit 'barrier': signalFence is not a Fence \(got an empty object\)/,
      ],
      [{ signal: 7 }, /signal \(deprecated alias of signalFence\) is not a Fence \(got 7\)/],
      [
        { signalFence: one, signal: other },
        /signalFence and its deprecated alias signal name different fences \(give signalFence only\)/,
      ],
    ];
    for (const [options, message] of cases) {
      const e = failure(() => scheduler.submit({ kind: 'barrier' }, options as SubmitOptions));
      expect(e.code).toBe('INVALID_ARGUMENT');
      expect(e.message).toMatch(message);
    }
    expect(one.timepoints[0]?.semaphore.value).toBe(0);
    expect(other.timepoints[0]?.semaphore.value).toBe(0);
  });
});
