import {
  BufferUsage,
  type CommandBuffer,
  type CommandBufferOptions,
  QueueAffinity,
  slotRef,
} from '@keel/hal';
import { describe, expect, it } from 'vitest';
import { createCommandBuffer, DeferredCommandBuffer, NoopSink, RecordingSink } from '../src/index';
import { fixtureDevice } from './fixtures/fixture-device';
import { expectKeelError } from './helpers';

const device = fixtureDevice();
const P = "command buffer 'cb'";

function make(options: Parameters<typeof createCommandBuffer>[1] = {}): CommandBuffer {
  return createCommandBuffer(device, { label: 'cb', ...options });
}

describe('options', () => {
  it('have the documented defaults', () => {
    const cb = createCommandBuffer(device);
    expect(cb).toBeInstanceOf(DeferredCommandBuffer);
    expect(cb.mode).toBe('one-shot');
    expect(cb.bindingCapacity).toBe(0);
    expect(cb.affinity).toBe(QueueAffinity.ANY);
    expect(cb.validation).toBe(true);
    expect(cb.state).toBe('initial');
    expect(cb.label).toBeUndefined();
    expect(cb.device).toBe(device);
    expect(cb.commandCount).toBe(0);
  });

  it('keeps the given options', () => {
    const cb = make({
      mode: 'reusable',
      bindingCapacity: 8,
      affinity: QueueAffinity.of(1),
      validation: false,
    });
    expect([cb.mode, cb.bindingCapacity, cb.affinity, cb.validation, cb.label]).toEqual([
      'reusable',
      8,
      2,
      false,
      'cb',
    ]);
  });

  it('rejects bad options with INVALID_ARGUMENT naming the option', () => {
    expectKeelError(
      () => make({ mode: 'twice' as 'reusable' }),
      'INVALID_ARGUMENT',
      `createCommandBuffer: option 'mode' must be one of 'one-shot', 'reusable', got "twice"`,
    );
    expectKeelError(
      () => make({ bindingCapacity: -1 }),
      'INVALID_ARGUMENT',
      `createCommandBuffer: option 'bindingCapacity' must be an integer in [0, 2147483647], got -1`,
    );
    expectKeelError(
      () => make({ bindingCapacity: 1.5 }),
      'INVALID_ARGUMENT',
      `createCommandBuffer: option 'bindingCapacity' must be an integer in [0, 2147483647], got 1.5`,
    );
    expectKeelError(
      () => make({ affinity: QueueAffinity.of(5) }),
      'INVALID_ARGUMENT',
      `${P}: option 'affinity': queue affinity 0x20 selects none of the device's 2 queue(s)`,
    );
  });

  it('rejects unknown keys, wrong types and masks wider than 32 bits (issue 15)', () => {
    expectKeelError(
      () => make({ modes: 'reusable' } as unknown as CommandBufferOptions),
      'INVALID_ARGUMENT',
      "createCommandBuffer: unknown option 'modes' (known options: mode, bindingCapacity, affinity, validation, label)",
    );
    expectKeelError(
      () => make({ validation: 'no' } as unknown as CommandBufferOptions),
      'INVALID_ARGUMENT',
      `createCommandBuffer: option 'validation' must be a boolean, got "no"`,
    );
    expectKeelError(
      () => make({ bindingCapacity: '4' } as unknown as CommandBufferOptions),
      'INVALID_ARGUMENT',
      `createCommandBuffer: option 'bindingCapacity' must be an integer in [0, 2147483647], got "4"`,
    );
    expectKeelError(
      () => make({ label: 7 } as unknown as CommandBufferOptions),
      'INVALID_ARGUMENT',
      `createCommandBuffer: option 'label' must be a string, got 7`,
    );
    expectKeelError(
      () => make({ affinity: 2 ** 32 + 1 }),
      'INVALID_ARGUMENT',
      `createCommandBuffer: option 'affinity' must be a 32-bit integer queue mask, got 4294967297`,
    );
    expectKeelError(
      () => createCommandBuffer(device, 'reusable' as unknown as CommandBufferOptions),
      'INVALID_ARGUMENT',
      `createCommandBuffer: options must be an object, got "reusable"`,
    );
  });
});

describe('state machine', () => {
  it('goes initial → recording → executable', () => {
    const cb = make();
    cb.begin();
    expect(cb.state).toBe('recording');
    cb.barrier();
    cb.end();
    expect(cb.state).toBe('executable');
    expect(cb.commandCount).toBe(1);
  });

  it('rejects recording outside begin/end with FAILED_PRECONDITION', () => {
    const cb = make({ bindingCapacity: 1 });
    const record: [string, () => void][] = [
      ['fill', () => cb.fill(slotRef(0), 0, 4)],
      ['update', () => cb.update(new Uint8Array(4), slotRef(0))],
      ['copy', () => cb.copy(slotRef(0, 0, 4), slotRef(0, 8, 4))],
      [
        'dispatch',
        () =>
          cb.dispatch(device.executable([{ name: 'k', bindingCount: 0, constantCount: 0 }]), 0, {
            workgroupCount: [1, 1, 1],
            bindings: [],
          }),
      ],
      ['barrier', () => cb.barrier()],
      ['beginDebugGroup', () => cb.beginDebugGroup('x')],
      ['endDebugGroup', () => cb.endDebugGroup()],
    ];
    for (const [name, fn] of record) {
      expectKeelError(
        fn,
        'FAILED_PRECONDITION',
        `${P}: ${name}() called in state 'initial'; commands are recorded between begin() and end()`,
      );
    }
    cb.begin();
    cb.end();
    for (const [name, fn] of record) {
      expectKeelError(
        fn,
        'FAILED_PRECONDITION',
        `${P}: ${name}() called in state 'executable'; commands are recorded between begin() and end()`,
      );
    }
    expect(cb.commandCount).toBe(0);
  });

  it('rejects begin twice and end without begin', () => {
    const cb = make();
    expectKeelError(
      () => cb.end(),
      'FAILED_PRECONDITION',
      `${P}: end() called in state 'initial'; end() follows begin()`,
    );
    cb.begin();
    expectKeelError(
      () => cb.begin(),
      'FAILED_PRECONDITION',
      `${P}: begin() called in state 'recording'; a command buffer is recorded once, from state 'initial'`,
    );
    cb.end();
    expectKeelError(
      () => cb.begin(),
      'FAILED_PRECONDITION',
      `${P}: begin() called in state 'executable'; a command buffer is recorded once, from state 'initial'`,
    );
    expectKeelError(
      () => cb.end(),
      'FAILED_PRECONDITION',
      `${P}: end() called in state 'executable'; end() follows begin()`,
    );
  });

  it('requires balanced debug groups at end()', () => {
    const cb = make();
    cb.begin();
    expectKeelError(
      () => cb.endDebugGroup(),
      'FAILED_PRECONDITION',
      `${P}: endDebugGroup() without an open debug group`,
    );
    cb.beginDebugGroup('outer');
    cb.beginDebugGroup('inner');
    cb.endDebugGroup();
    expectKeelError(
      () => cb.end(),
      'FAILED_PRECONDITION',
      `${P}: end() with 1 debug group(s) still open; close each with endDebugGroup()`,
    );
    expect(cb.state).toBe('recording');
    cb.endDebugGroup();
    cb.end();
    expect(cb.state).toBe('executable');
    expect(cb.commandCount).toBe(4);
  });

  it('cannot be submitted or replayed before end()', () => {
    const cb = make();
    expectKeelError(
      () => cb.validateSubmission(),
      'FAILED_PRECONDITION',
      `${P}: cannot be submitted in state 'initial'; record it and call end() first`,
    );
    cb.begin();
    expectKeelError(
      () => cb.validateSubmission(),
      'FAILED_PRECONDITION',
      `${P}: cannot be submitted in state 'recording'; record it and call end() first`,
    );
    expectKeelError(
      () => cb.markSubmitted(),
      'FAILED_PRECONDITION',
      `${P}: cannot be submitted in state 'recording'; record it and call end() first`,
    );
    expectKeelError(
      () => cb.replay(new NoopSink()),
      'FAILED_PRECONDITION',
      `${P}: replay() called in state 'recording'; call end() first`,
    );
    expectKeelError(
      () => cb.devicePlan({}, () => 1),
      'FAILED_PRECONDITION',
      `${P}: devicePlan() called in state 'recording'; call end() first`,
    );
  });

  it('consumes a one-shot buffer at its first submission', () => {
    const cb = make();
    cb.begin();
    cb.barrier();
    cb.end();
    cb.validateSubmission();
    cb.markSubmitted();
    expect(cb.state).toBe('consumed');
    const twice = `${P}: a one-shot command buffer cannot be submitted twice`;
    expectKeelError(() => cb.validateSubmission(), 'FAILED_PRECONDITION', twice);
    expectKeelError(() => cb.markSubmitted(), 'FAILED_PRECONDITION', twice);
    // The submission that consumed it still replays (devices replay after markSubmitted).
    const sink = new RecordingSink();
    cb.replay(sink);
    expect(sink.commands).toEqual([{ op: 'barrier' }]);
  });

  it('lets a reusable buffer be submitted many times', () => {
    const cb = make({ mode: 'reusable' });
    cb.begin();
    cb.end();
    for (let i = 0; i < 3; i++) {
      cb.validateSubmission();
      cb.markSubmitted();
    }
    expect(cb.state).toBe('executable');
    expect((cb as DeferredCommandBuffer).submissionCount).toBe(3);
  });
});

describe('device plans', () => {
  it('build once per key and are cached', () => {
    const cb = make({ mode: 'reusable' });
    cb.begin();
    cb.end();
    const keyA = {};
    const keyB = {};
    let builds = 0;
    const build = (c: CommandBuffer) => {
      builds++;
      return { of: c, n: builds };
    };
    const a1 = cb.devicePlan(keyA, build);
    const a2 = cb.devicePlan(keyA, build);
    const b = cb.devicePlan(keyB, build);
    expect(a1).toBe(a2);
    expect(a1.of).toBe(cb);
    expect(b.n).toBe(2);
    expect(builds).toBe(2);
  });

  it('cache nothing when the build throws, and need an object key', () => {
    const cb = make();
    cb.begin();
    cb.end();
    const key = {};
    expect(() =>
      cb.devicePlan(key, () => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(cb.devicePlan(key, () => 7)).toBe(7);
    expectKeelError(
      () => cb.devicePlan(3 as unknown as object, () => 1),
      'INVALID_ARGUMENT',
      `${P}: devicePlan key must be an object, got 3`,
    );
  });
});

describe('failed commands record nothing', () => {
  it('leaves count, stream and slot requirements unchanged', () => {
    const cb = new DeferredCommandBuffer(device, { label: 'cb', bindingCapacity: 4 });
    const exe = device.executable([{ name: 'k', bindingCount: 2, constantCount: 0 }]);
    const bad = device.buffer(64, BufferUsage.TRANSFER, 'bad');
    cb.begin();
    expect(() =>
      cb.dispatch(exe, 'k', { workgroupCount: [1, 1, 1], bindings: [slotRef(0), { buffer: bad }] }),
    ).toThrow('lacks DISPATCH_STORAGE or DISPATCH_UNIFORM usage');
    expect(cb.commandCount).toBe(0);
    expect(cb.recordedBytes).toBe(0);
    expect(cb.slotRequirements()).toEqual([]);
    cb.end();
    cb.validateSubmission(); // no slot is used: no table needed
  });
});
