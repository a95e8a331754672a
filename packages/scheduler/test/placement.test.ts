/** Placement rules, observability and bad input, against the real CPU device (task mode, 4 queues). */
import { ErrorCode, Fence, KeelError, type Semaphore } from '@keel/fence';
import { type Device, QueueAffinity } from '@keel/hal';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Scheduler, targetsOf } from '../src/index';
import { cpuDevice, mixExecutable, nextFence, readBack, USAGE } from './helpers';

function expectKeelError(fn: () => unknown, code: ErrorCode, ...fragments: string[]): KeelError {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(KeelError.is(caught), `expected a KeelError, got ${String(caught)}`).toBe(true);
  const error = caught as KeelError;
  expect(error.code, error.message).toBe(code);
  for (const fragment of fragments) expect(error.message).toContain(fragment);
  return error;
}

/** Waits until every target of `scheduler` has nothing in flight (completion callbacks ran). */
async function settled(scheduler: Scheduler): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (scheduler.stats().targets.every((t) => t.inFlight === 0)) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`operations still in flight: ${JSON.stringify(scheduler.stats().targets)}`);
}

describe('placement on one device with four queues', () => {
  let device: Device;
  let scheduler: Scheduler;
  /** A semaphore nothing signals until the test opens it: work placed behind it stays in flight. */
  let gate: Semaphore;

  beforeAll(async () => {
    device = await cpuDevice(4);
  });
  afterAll(async () => {
    await device?.destroy();
  });
  beforeEach(() => {
    scheduler = new Scheduler(targetsOf(device), { trace: true });
    gate = device.createSemaphore(0);
  });

  /** A barrier behind the gate (plus `wait`), signalling a fresh fence; returns [target, signal]. */
  function gated(options: { affinity?: number; wait?: Fence } = {}): [number, Fence] {
    const signal = nextFence(device);
    const wait = Fence.join(Fence.of({ semaphore: gate, value: 1 }), options.wait ?? Fence.empty);
    const target = scheduler.submit({ kind: 'barrier' }, { affinity: options.affinity, wait, signal });
    return [target, signal];
  }

  async function open(): Promise<void> {
    gate.signal(1);
    await settled(scheduler);
  }

  it('spreads independent work over the least-loaded targets', async () => {
    const targets = [gated()[0], gated()[0], gated()[0], gated()[0]];
    expect([...targets].sort()).toEqual([0, 1, 2, 3]);
    expect(scheduler.trace().map((r) => r.reason)).toEqual([
      'least-loaded',
      'least-loaded',
      'least-loaded',
      'least-loaded',
    ]);
    expect(scheduler.stats().targets.map((t) => t.inFlight)).toEqual([1, 1, 1, 1]);
    await open();
    expect(scheduler.stats().targets.map((t) => t.inFlight)).toEqual([0, 0, 0, 0]);
  });

  it('keeps a chain on its producer even when that target is the busiest', async () => {
    let [target, signal] = gated({ affinity: QueueAffinity.of(2) });
    expect(target).toBe(2);
    for (let i = 0; i < 10; i++) {
      [target, signal] = gated({ wait: signal });
      expect(target).toBe(2);
    }
    const stats = scheduler.stats();
    expect(stats.byReason).toEqual({ explicit: 1, producer: 10, join: 0, 'least-loaded': 0 });
    expect(stats.targets[2]!.inFlight).toBe(11);
    expect(stats.locality).toEqual({ eligible: 10, onProducer: 10, share: 1 });
    expect(scheduler.producerOf(signal.timepoints[0]!.semaphore)).toBe(2);
    await open();
  });

  it('sends a join to the target that produced most of its inputs', async () => {
    const a1 = gated({ affinity: 0b0001 })[1];
    const a2 = gated({ affinity: 0b0001 })[1];
    const b1 = gated({ affinity: 0b0010 })[1];
    const [target] = gated({ wait: Fence.join(a1, b1, a2) });
    expect(target).toBe(0);
    const last = scheduler.trace().at(-1)!;
    expect(last).toMatchObject({ op: 'barrier', target: 0, reason: 'join', producers: 0b11 });
    await open();
  });

  it('breaks a tied join by load', async () => {
    const a = gated({ affinity: 0b0001 })[1];
    gated({ affinity: 0b0001 }); // target 0 now has more in flight
    const b = gated({ affinity: 0b0010 })[1];
    const [target] = gated({ wait: Fence.join(a, b) });
    expect(target).toBe(1);
    expect(scheduler.trace().at(-1)!.reason).toBe('join');
    await open();
  });

  it('respects explicit masks exactly, even against the producer', async () => {
    const produced = gated({ affinity: 0b0001 })[1];
    const [single] = gated({ wait: produced, affinity: 0b0100 });
    expect(single).toBe(2);
    expect(scheduler.trace().at(-1)!.reason).toBe('explicit');
    const [either] = gated({ wait: produced, affinity: 0b1010 });
    expect([1, 3]).toContain(either);
    expect(scheduler.trace().at(-1)!.reason).toBe('least-loaded');
    // A join whose mask admits only one of its producers follows that one.
    const other = gated({ affinity: 0b1000 })[1];
    const [joined] = gated({ wait: Fence.join(produced, other), affinity: 0b1100 });
    expect(joined).toBe(3);
    expect(scheduler.trace().at(-1)!.reason).toBe('producer');
    await open();
  });

  it('counts an operation without signal until it completed', async () => {
    const wait = Fence.of({ semaphore: gate, value: 1 });
    const target = scheduler.submit({ kind: 'barrier' }, { wait });
    expect(scheduler.stats().targets[target]!.inFlight).toBe(1);
    await open();
  });

  it('follows the producer through every kind of queue operation', async () => {
    const executable = await mixExecutable(device);
    let signal = nextFence(device);
    const a = scheduler.submit(
      { kind: 'alloca', params: { usage: USAGE, label: 'a' }, size: 256 },
      { signal, affinity: QueueAffinity.of(3) },
    );
    const home = scheduler.lastTarget;
    expect(home).toBe(3);
    const b = device.createBuffer({ usage: USAGE, byteLength: 256, label: 'b' });
    const out = device.createBuffer({ usage: USAGE, byteLength: 256, label: 'out' });
    const step = (op: Parameters<Scheduler['submit']>[0]): void => {
      const next = nextFence(device);
      scheduler.submit(op, { wait: signal, signal: next });
      expect(scheduler.lastTarget, op.kind).toBe(home);
      signal = next;
    };
    step({ kind: 'fill', target: { buffer: a }, pattern: 0x01020304, patternLength: 4 });
    step({ kind: 'update', source: new Uint32Array([7, 8]), target: { buffer: a, offset: 8 } });
    step({ kind: 'write', source: new Uint32Array([9]), target: { buffer: b, offset: 4 } });
    step({ kind: 'copy', source: { buffer: a, offset: 0, length: 16 }, target: { buffer: b, offset: 16 } });
    const cb = device.createCommandBuffer({ mode: 'one-shot' });
    cb.begin();
    cb.dispatch(executable, 'mix', {
      workgroupCount: [1, 1, 1],
      constants: [5],
      bindings: [{ buffer: a }, { buffer: b }, { buffer: out }],
    });
    cb.end();
    step({ kind: 'execute', commandBuffers: [cb] });
    let called = false;
    step({
      kind: 'host-call',
      callback: () => {
        called = true;
      },
    });
    step({ kind: 'barrier' });
    const bytes = new Uint8Array(256);
    step({ kind: 'read', source: { buffer: out }, target: bytes });
    step({ kind: 'dealloca', buffer: a });
    await signal.wait({ timeoutMs: 10_000 });
    expect(called).toBe(true);
    const words = new Uint32Array(bytes.buffer);
    const aw = new Uint32Array(64).fill(0x01020304);
    aw[2] = 7;
    aw[3] = 8;
    const bw = new Uint32Array(64);
    bw[1] = 9;
    bw.set(aw.subarray(0, 4), 4);
    const expected = aw.map((x, i) => ((Math.imul(x, 0x9e3779b1) ^ bw[i]!) + 5) >>> 0);
    expect([...words]).toEqual([...expected]);
    const stats = scheduler.stats();
    expect(stats.byReason.producer).toBe(9);
    expect(stats.locality.share).toBe(1);
    b.destroy();
    out.destroy();
    await settled(scheduler);
  });

  it('places an execute only on queues its command buffer allows', async () => {
    const executable = await mixExecutable(device);
    const buffers = [0, 1, 2].map(() => device.createBuffer({ usage: USAGE, byteLength: 256 }));
    const cb = device.createCommandBuffer({ mode: 'one-shot', affinity: QueueAffinity.of(1) });
    cb.begin();
    cb.dispatch(executable, 'mix', {
      workgroupCount: [1, 1, 1],
      constants: [1],
      bindings: buffers.map((buffer) => ({ buffer })),
    });
    cb.end();
    const signal = nextFence(device);
    expect(scheduler.submit({ kind: 'execute', commandBuffers: [cb] }, { signal })).toBe(1);
    expect(scheduler.trace().at(-1)!.reason).toBe('explicit');
    await signal.wait({ timeoutMs: 10_000 });
    const cb2 = device.createCommandBuffer({ mode: 'one-shot', affinity: QueueAffinity.of(1) });
    expectKeelError(
      () => scheduler.submit({ kind: 'execute', commandBuffers: [cb2] }, { affinity: 0b0101 }),
      ErrorCode.INVALID_ARGUMENT,
      '0x5',
      '0x2',
    );
    for (const buffer of buffers) buffer.destroy();
  });

  it('rejects an affinity that selects no target, naming the mask', () => {
    expectKeelError(
      () => scheduler.submit({ kind: 'barrier' }, { affinity: 0 }),
      ErrorCode.INVALID_ARGUMENT,
      '0x0',
    );
    expectKeelError(
      () => scheduler.submit({ kind: 'barrier' }, { affinity: 0x30 }),
      ErrorCode.INVALID_ARGUMENT,
      '0x30',
      '0xf',
    );
    expectKeelError(
      () => scheduler.submit({ kind: 'barrier' }, { affinity: 1.5 }),
      ErrorCode.INVALID_ARGUMENT,
      'integer mask',
    );
    expect(scheduler.stats().submitted).toBe(0);
  });

  it('rejects what is not a queue operation or a fence', () => {
    expectKeelError(
      () => scheduler.submit({ kind: 'launch' } as never),
      ErrorCode.INVALID_ARGUMENT,
      "'launch'",
    );
    expectKeelError(() => scheduler.submit(null as never), ErrorCode.INVALID_ARGUMENT);
    expectKeelError(
      () => scheduler.submit({ kind: 'barrier' }, { wait: {} as never }),
      ErrorCode.INVALID_ARGUMENT,
      'wait is not a Fence',
    );
    expectKeelError(
      () => scheduler.submit({ kind: 'fill', target: undefined as never, pattern: 0, patternLength: 4 }),
      ErrorCode.INVALID_ARGUMENT,
      'target',
    );
  });

  it('lets device argument errors through unchanged and records nothing', () => {
    const buffer = device.createBuffer({ usage: USAGE, byteLength: 64 });
    const signal = nextFence(device);
    expectKeelError(
      () =>
        scheduler.submit(
          { kind: 'fill', target: { buffer, offset: 0, length: 128 }, pattern: 0, patternLength: 4 },
          { signal },
        ),
      ErrorCode.OUT_OF_RANGE,
    );
    expect(scheduler.stats().submitted).toBe(0);
    expect(scheduler.producerOf(signal.timepoints[0]!.semaphore)).toBeUndefined();
    expect(scheduler.trace()).toEqual([]);
    buffer.destroy();
  });

  it('keeps a bounded trace and resettable counters', async () => {
    const small = new Scheduler(targetsOf(device), { trace: 3 });
    for (let i = 0; i < 5; i++) small.submit({ kind: 'barrier' }, { signal: nextFence(device) });
    expect(small.trace().map((r) => r.sequence)).toEqual([2, 3, 4]);
    expect(small.stats().submitted).toBe(5);
    small.resetStats();
    small.clearTrace();
    expect(small.stats().submitted).toBe(0);
    expect(small.trace()).toEqual([]);
    expect(new Scheduler(targetsOf(device)).trace()).toEqual([]);
    expectKeelError(
      () => new Scheduler(targetsOf(device), { trace: 0 }),
      ErrorCode.INVALID_ARGUMENT,
      'trace',
    );
    await settled(small);
  });

  it('validates its targets', () => {
    expectKeelError(() => new Scheduler([]), ErrorCode.INVALID_ARGUMENT, '1..32');
    expectKeelError(() => new Scheduler([{ device, queue: 4 }]), ErrorCode.INVALID_ARGUMENT, 'queue 4');
    expectKeelError(
      () =>
        new Scheduler([
          { device, queue: 1 },
          { device, queue: 1 },
        ]),
      ErrorCode.INVALID_ARGUMENT,
      'twice',
    );
    expectKeelError(() => new Scheduler([{ queue: 0 } as never]), ErrorCode.INVALID_ARGUMENT, 'no device');
    // A subset of queues, in any order: bit i is the i-th target.
    const subset = new Scheduler([
      { device, queue: 3 },
      { device, queue: 1 },
    ]);
    expect(subset.allTargets).toBe(0b11);
  });

  it('maps a target to its own queue of the device', async () => {
    const reversed = new Scheduler([
      { device, queue: 3, label: 'q3' },
      { device, queue: 0, label: 'q0' },
    ]);
    const buffer = device.createBuffer({ usage: USAGE, byteLength: 16 });
    const signal = nextFence(device);
    reversed.submit(
      { kind: 'fill', target: { buffer }, pattern: 0xab, patternLength: 1 },
      { affinity: 0b10, signal },
    );
    const bytes = await readBack(reversed, buffer, signal);
    expect([...bytes]).toEqual(new Array(16).fill(0xab));
    expect(reversed.stats().targets.map((t) => t.label)).toEqual(['target 0 (q3)', 'target 1 (q0)']);
    buffer.destroy();
  });
});
