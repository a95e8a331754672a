/** Several devices behind one scheduler: buffers pin work to their device, cross-device copies, loss. */
import { Fence, KeelError, TimelineSemaphore } from '@keel/fence';
import type { Device } from '@keel/hal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyAcrossDevices, Scheduler, targetsOf } from '../src/index';
import { cpuDevice, nextFence, readBack, USAGE } from './helpers';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    if (KeelError.is(error)) return `${error.code}: ${error.message}`;
    throw error;
  }
  return undefined;
}

describe('two CPU devices behind one scheduler', () => {
  let a: Device;
  let b: Device;
  let scheduler: Scheduler;

  beforeAll(async () => {
    a = await cpuDevice(2);
    b = await cpuDevice(2, 'sync');
    scheduler = new Scheduler(targetsOf(a, b), { trace: true });
  });
  afterAll(async () => {
    await a?.destroy();
    await b?.destroy();
  });

  it('numbers targets device by device', () => {
    expect(scheduler.allTargets).toBe(0b1111);
    expect(scheduler.targetsOfDevice(a)).toBe(0b0011);
    expect(scheduler.targetsOfDevice(b)).toBe(0b1100);
  });

  it('places operations that name buffers on a target of their device', async () => {
    const onB = b.createBuffer({ usage: USAGE, byteLength: 64 });
    const signal = nextFence(b);
    const target = scheduler.submit(
      { kind: 'fill', target: { buffer: onB }, pattern: 0x11, patternLength: 1 },
      { signal },
    );
    expect([2, 3]).toContain(target);
    // A mask that leaves no target of that device: INVALID_ARGUMENT naming the mask.
    const message = codeOf(() =>
      scheduler.submit(
        { kind: 'fill', target: { buffer: onB }, pattern: 0, patternLength: 1 },
        { affinity: 0b0011 },
      ),
    );
    expect(message).toMatch(/^INVALID_ARGUMENT: .*0x3.*0xc/);
    expect([...(await readBack(scheduler, onB, signal))]).toEqual(new Array(64).fill(0x11));
    onB.destroy();
  });

  it('refuses a queue copy between devices and moves data with copyAcrossDevices', async () => {
    const source = a.createBuffer({ usage: USAGE, byteLength: 1024, label: 'src' });
    const target = b.createBuffer({ usage: USAGE, byteLength: 1024, label: 'dst' });
    expect(
      codeOf(() =>
        scheduler.submit({ kind: 'copy', source: { buffer: source }, target: { buffer: target } }),
      ),
    ).toMatch(/^INVALID_ARGUMENT: .*copyAcrossDevices/);
    const filled = nextFence(a);
    scheduler.submit(
      {
        kind: 'write',
        source: Uint32Array.from({ length: 256 }, (_, i) => i * 3),
        target: { buffer: source },
      },
      { signal: filled },
    );
    const done = nextFence(b);
    const placement = copyAcrossDevices(
      scheduler,
      { buffer: source, offset: 64, length: 512 },
      { buffer: target, offset: 128 },
      { wait: filled, signal: done },
    );
    expect(scheduler.targetsOfDevice(a) & (1 << placement.read)).not.toBe(0);
    expect(scheduler.targetsOfDevice(b) & (1 << placement.write)).not.toBe(0);
    await done.wait({ timeoutMs: 10_000 });
    const words = new Uint32Array((await readBack(scheduler, target)).buffer);
    expect([...words.subarray(32, 160)]).toEqual(Array.from({ length: 128 }, (_, i) => (i + 16) * 3));
    expect(words[0]).toBe(0);
    // Lengths must match; same-device copies are one queue copy.
    expect(
      codeOf(() =>
        copyAcrossDevices(scheduler, { buffer: source, length: 16 }, { buffer: target, length: 32 }),
      ),
    ).toMatch(/^INVALID_ARGUMENT: .*16 bytes.*32/);
    expect(
      codeOf(() => copyAcrossDevices(scheduler, { buffer: source }, { buffer: target, offset: 4 })),
    ).toMatch(/^OUT_OF_RANGE: /);
    const again = a.createBuffer({ usage: USAGE, byteLength: 1024 });
    const copied = nextFence(a);
    expect(copyAcrossDevices(scheduler, { buffer: source }, { buffer: again }, { signal: copied }).read).toBe(
      -1,
    );
    expect(new Uint32Array((await readBack(scheduler, again, copied)).buffer)[5]).toBe(15);
    for (const buffer of [source, target, again]) buffer.destroy();
  });

  it('refuses buffers of a device that has no target', async () => {
    const stranger = await cpuDevice(1, 'sync');
    const buffer = stranger.createBuffer({ usage: USAGE, byteLength: 16 });
    expect(
      codeOf(() => scheduler.submit({ kind: 'fill', target: { buffer }, pattern: 0, patternLength: 1 })),
    ).toMatch(/^INVALID_ARGUMENT: .*has no target in this scheduler/);
    await stranger.destroy();
  });
});

describe('a destroyed device', () => {
  it('is never placed on again; waiting on its failed work fails ABORTED, on what it cannot reach FAILED_PRECONDITION', async () => {
    const keep = await cpuDevice(1);
    const doomed = await cpuDevice(2);
    const scheduler = new Scheduler(targetsOf(keep, doomed));
    const gate = doomed.createSemaphore(0);
    // Pending work on the doomed device, and work it already finished.
    const pending = nextFence(doomed);
    scheduler.submit(
      { kind: 'barrier' },
      { affinity: 0b110, wait: Fence.of({ semaphore: gate, value: 1 }), signal: pending },
    );
    const finished = nextFence(doomed);
    scheduler.submit({ kind: 'barrier' }, { affinity: 0b110, signal: finished });
    await finished.wait({ timeoutMs: 10_000 });
    // A host timeline it advanced to 1: its value 2 is left to a device that is going away.
    const lane = new TimelineSemaphore(0, { label: 'lane' });
    scheduler.submit(
      { kind: 'barrier' },
      { affinity: 0b110, signal: Fence.of({ semaphore: lane, value: 1 }) },
    );
    await lane.wait(1, { timeoutMs: 10_000 });

    await doomed.destroy();
    await doomed.lost; // the scheduler observes loss through `lost` (it subscribed first)
    expect(scheduler.lostTargets).toBe(0b110);
    expect(scheduler.stats().targets.map((t) => t.lost)).toEqual([false, true, true]);

    // Its pending work failed with it: an operation waiting on it goes elsewhere and fails ABORTED
    // (the device contract for a failed wait), so nothing downstream hangs.
    expect(pending.timepoints[0]?.semaphore.failure).toBeDefined();
    const aborted = nextFence(keep);
    expect(scheduler.submit({ kind: 'barrier' }, { wait: pending, signal: aborted })).toBe(0);
    await expect(aborted.wait({ timeoutMs: 10_000 })).rejects.toMatchObject({ code: 'ABORTED' });
    // A timepoint only it was to reach, not failed, can never be reached: FAILED_PRECONDITION at once.
    expect(
      codeOf(() => scheduler.submit({ kind: 'barrier' }, { wait: Fence.of({ semaphore: lane, value: 2 }) })),
    ).toMatch(/^FAILED_PRECONDITION: .*'lane'@2 .*destroyed or lost/);
    expect(codeOf(() => scheduler.submit({ kind: 'barrier' }, { affinity: 0b100 }))).toMatch(
      /^FAILED_PRECONDITION: .*0x4.*destroyed or lost/,
    );
    // A timepoint it reached before it went away still orders work elsewhere.
    const after = nextFence(keep);
    expect(scheduler.submit({ kind: 'barrier' }, { wait: finished, signal: after })).toBe(0);
    await after.wait({ timeoutMs: 10_000 });
    // Free placement simply avoids the lost targets.
    for (let i = 0; i < 4; i++)
      expect(scheduler.submit({ kind: 'barrier' }, { signal: nextFence(keep) })).toBe(0);
    await keep.destroy();
  });
});
