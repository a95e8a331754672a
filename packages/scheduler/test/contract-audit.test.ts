/**
 * Contract violations found by the scheduler audit (notes/audit-res.md), each pinned by a test on real
 * CPU devices in sync and task modes: a wait on a failed timepoint of a lost device (the signal fails
 * ABORTED, no FAILED_PRECONDITION and no hang), submit options checked like constructor options,
 * `flush` masks checked like submit's, `copyAcrossDevices` checking both halves before it enqueues
 * either, and target labels.
 */
import { Fence, KeelError, TimelineSemaphore } from '@keel/fence';
import { BufferUsage, type Device } from '@keel/hal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  copyAcrossDevices,
  Scheduler,
  type SchedulerTarget,
  type SubmitOptions,
  targetsOf,
} from '../src/index';
import { cpuDevice, failure } from './helpers';

function fenceOf(label: string): Fence {
  return Fence.of({ semaphore: new TimelineSemaphore(0, { label }), value: 1 });
}

describe.each(['sync', 'task'] as const)('scheduler contract (audit) on cpu %s', (mode) => {
  let a: Device;
  let b: Device;
  beforeAll(async () => {
    a = await cpuDevice(2, mode);
    b = await cpuDevice(1, mode);
  });
  afterAll(async () => {
    await Promise.all([a.destroy(), b.destroy()]);
  });

  it('a submit in the same turn as destroy() goes to a live device (device.lostReason), not the destroyed one', async () => {
    const doomed = await cpuDevice(1, mode);
    const scheduler = new Scheduler(targetsOf(doomed, b)); // target 0 = doomed, 1 = b
    const destroyed = doomed.destroy(); // not awaited: `lost` has not resolved yet
    const signal = fenceOf('same turn');
    expect(scheduler.submit({ kind: 'barrier' }, { signalFence: signal })).toBe(1);
    await signal.wait({ timeoutMs: 5000 });
    expect(scheduler.lostTargets).toBe(0b1);
    const refused = failure(() => scheduler.submit({ kind: 'barrier' }, { affinity: 0b1 }));
    expect(refused.code).toBe('FAILED_PRECONDITION');
    expect(refused.message).toMatch(/selects only targets whose device was destroyed or lost/);
    await destroyed;
  });

  it('finding 3: waiting on a failed timepoint of a lost device fails the signal ABORTED (no throw, no hang)', async () => {
    const doomed = await cpuDevice(1, mode);
    const scheduler = new Scheduler(targetsOf(a, doomed)); // targets 0, 1 = a; 2 = doomed
    const gate = new TimelineSemaphore(0, { label: 'gate' });
    const x = new TimelineSemaphore(0, { label: 'X' });
    scheduler.submit(
      { kind: 'barrier' },
      {
        affinity: 0b100,
        wait: Fence.of({ semaphore: gate, value: 1 }),
        signalFence: Fence.of({ semaphore: x, value: 1 }),
      },
    );
    expect(scheduler.producerOf(x)).toBe(2);
    const w = new TimelineSemaphore(0, { label: 'W' });
    scheduler.submit(
      { kind: 'barrier' },
      { affinity: 0b100, signalFence: Fence.of({ semaphore: w, value: 1 }) },
    );
    await w.wait(1, { timeoutMs: 5000 });
    await doomed.destroy();
    while (scheduler.lostTargets === 0) await new Promise((r) => setTimeout(r, 1));
    expect(x.failure).toBeDefined();
    const y = fenceOf('Y');
    const placed = scheduler.submit(
      { kind: 'barrier' },
      { wait: Fence.of({ semaphore: x, value: 1 }), signalFence: y },
    );
    expect(placed === 0 || placed === 1).toBe(true);
    let error: unknown;
    try {
      await y.wait({ timeoutMs: 5000 });
    } catch (e) {
      error = e;
    }
    expect(KeelError.is(error)).toBe(true);
    expect((error as KeelError).code).toBe('ABORTED');
    // The cause chain reaches X's failure.
    let cause: unknown = error;
    const chain: unknown[] = [];
    while (cause !== undefined && chain.length < 8) {
      chain.push(cause);
      cause = (cause as { cause?: unknown }).cause;
    }
    expect(chain).toContain(x.failure);
    // A timepoint of the lost device that is still pending (reached value 1, not failed) is refused.
    const e = failure(() =>
      scheduler.submit({ kind: 'barrier' }, { wait: Fence.of({ semaphore: w, value: 2 }) }),
    );
    expect(e.code).toBe('FAILED_PRECONDITION');
    expect(e.message).toMatch(/wait timepoint 'W'@2 .* it can never be reached/);
  });

  it('finding 4: submit options are checked (unknown keys, non-objects), nothing enqueued', async () => {
    const scheduler = new Scheduler(targetsOf(a, b));
    const f = fenceOf('F');
    const cases: [unknown, RegExp][] = [
      [
        { signalfence: f },
        /^Scheduler\.submit 'barrier': unknown option 'signalfence' \(known options: affinity, wait, signalFence, signal\)$/,
      ],
      [5, /^Scheduler\.submit 'barrier': options must be an object, got 5$/],
      [null, /^Scheduler\.submit 'barrier': options must be an object, got null$/],
      [[f], /^Scheduler\.submit 'barrier': options must be an object/],
    ];
    for (const [options, message] of cases) {
      const e = failure(() => scheduler.submit({ kind: 'barrier' }, options as SubmitOptions));
      expect(e.code).toBe('INVALID_ARGUMENT');
      expect(e.message).toMatch(message);
    }
    const buffer = a.createBuffer({ byteLength: 16, usage: BufferUsage.DEFAULT });
    const e = failure(() =>
      copyAcrossDevices(scheduler, { buffer }, { buffer }, { signalfence: f } as SubmitOptions),
    );
    expect(e.message).toMatch(/^copyAcrossDevices: unknown option 'signalfence'/);
    expect(scheduler.stats().submitted).toBe(0);
    expect(f.query()).toBe('pending');
    buffer.destroy();
    // Valid options still work, with or without each key.
    const done = fenceOf('done');
    scheduler.submit({ kind: 'barrier' }, { affinity: 0b1, wait: Fence.empty, signalFence: done });
    scheduler.submit({ kind: 'barrier' });
    scheduler.submit({ kind: 'barrier' }, {});
    await done.wait({ timeoutMs: 5000 });
  });

  it('finding 8: flush checks its mask as submit does', () => {
    const scheduler = new Scheduler(targetsOf(a)); // 2 targets
    for (const mask of [0, 'x', 2 ** 40, 0b100]) {
      const e = failure(() => scheduler.flush(mask as number));
      expect(e.code).toBe('INVALID_ARGUMENT');
      expect(e.message).toMatch(/^Scheduler\.flush: /);
    }
    expect(failure(() => scheduler.flush(0b100)).message).toBe(
      "Scheduler.flush: affinity 0x4 selects none of the scheduler's 2 target(s) (0x3)",
    );
    scheduler.flush();
    scheduler.flush(0b11);
    scheduler.flush(-1);
  });

  it('finding 9: copyAcrossDevices checks the write half before it submits the read half', async () => {
    const scheduler = new Scheduler(targetsOf(a, b)); // targets 0, 1 = a; 2 = b
    const onA = a.createBuffer({ byteLength: 16, usage: BufferUsage.DEFAULT });
    const onB = b.createBuffer({ byteLength: 16, usage: BufferUsage.DEFAULT });
    const outside = await cpuDevice(1, mode);
    const onOutside = outside.createBuffer({ byteLength: 16, usage: BufferUsage.DEFAULT });
    const noTarget = b.createBuffer({ byteLength: 16, usage: BufferUsage.TRANSFER_SOURCE });
    const dead = b.createBuffer({ byteLength: 16, usage: BufferUsage.DEFAULT });
    dead.destroy();
    const f1 = fenceOf('f1');
    const f2 = fenceOf('f2');
    const cases: [string, () => unknown, RegExp, string?][] = [
      [
        'affinity without a target of the destination',
        () => copyAcrossDevices(scheduler, { buffer: onA }, { buffer: onB }, { affinity: 0b011 }),
        /affinity 0x3 selects none of the targets that can run it \(0x4/,
      ],
      [
        'signalFence and signal differ',
        () => copyAcrossDevices(scheduler, { buffer: onA }, { buffer: onB }, { signalFence: f1, signal: f2 }),
        /signalFence and its deprecated alias signal name different fences/,
      ],
      [
        'signalFence not a Fence',
        () =>
          copyAcrossDevices(
            scheduler,
            { buffer: onA },
            { buffer: onB },
            {
              signalFence: 7 as unknown as Fence,
            },
          ),
        /signalFence is not a Fence \(got 7\)/,
      ],
      [
        'destination outside the scheduler',
        () => copyAcrossDevices(scheduler, { buffer: onA }, { buffer: onOutside }),
        /which has no target in this scheduler/,
      ],
      [
        'destination without TRANSFER_TARGET',
        () => copyAcrossDevices(scheduler, { buffer: onA }, { buffer: noTarget }),
        /copyAcrossDevices target: .*TRANSFER_TARGET/,
      ],
      [
        'destination destroyed',
        () => copyAcrossDevices(scheduler, { buffer: onA }, { buffer: dead }),
        /copyAcrossDevices target: .*was destroyed and cannot be used/,
        'FAILED_PRECONDITION',
      ],
    ];
    for (const [name, fn, message, code = 'INVALID_ARGUMENT'] of cases) {
      const e = failure(fn);
      expect(e.code, name).toBe(code);
      expect(e.message, name).toMatch(message);
      expect(scheduler.stats().submitted, name).toBe(0);
    }
    expect(f1.query()).toBe('pending');
    // The happy path still moves the bytes.
    const done = fenceOf('done');
    a.queueFill(1, Fence.empty, Fence.empty, { buffer: onA }, 9, 4);
    const placement = copyAcrossDevices(scheduler, { buffer: onA }, { buffer: onB }, { signalFence: done });
    expect(placement.write).toBe(2);
    await done.wait({ timeoutMs: 5000 });
    const out = new Uint32Array(4);
    const read = fenceOf('read');
    scheduler.submit(
      { kind: 'read', source: { buffer: onB }, target: out },
      { wait: done, signalFence: read },
    );
    await read.wait({ timeoutMs: 5000 });
    expect(Array.from(out)).toEqual([9, 9, 9, 9]);
    for (const buffer of [onA, onB, noTarget]) buffer.destroy();
    await outside.destroy();
  });

  it('finding 12: a target label must be a string', () => {
    const e = failure(
      () => new Scheduler([{ device: a, queue: 0, label: { x: 1 } } as unknown as SchedulerTarget]),
    );
    expect(e.code).toBe('INVALID_ARGUMENT');
    expect(e.message).toBe('Scheduler: target 0: label must be a string, got an object { x }');
    expect(new Scheduler([{ device: a, queue: 0, label: 'main' }]).stats().targets[0]?.label).toBe(
      'target 0 (main)',
    );
  });
});
