/** Bad input always gets a KeelError (never a hang or a crash), and the device lifecycle. */
import { Fence, KeelError } from '@keel/fence';
import { BufferUsage, ErrorCode, QueueAffinity } from '@keel/hal';
import { check, checkEqual, expectKeelError, expectRejection } from '../assertions';
import { defineCase } from '../case';

export const validationCases = [
  defineCase({
    id: 'validation.empty-affinity',
    title:
      'an affinity that selects no queue, or is not a 32-bit mask (2**32 + 1, 2**33, 1.5), is INVALID_ARGUMENT for every queue operation',
    tags: ['validation'],
    recordsCommands: false,
    async run(ctx) {
      const d = ctx.device;
      const buffer = ctx.buffer(64);
      const cb = ctx.record();
      cb.end();
      const none = QueueAffinity.NONE;
      // Bits above the device's queues select nothing either.
      const above = ctx.queueCount >= 32 ? none : QueueAffinity.of(31);
      const code = ErrorCode.INVALID_ARGUMENT;
      // Wider than 32 bits: refused, never truncated onto queue 0 (2**32 + 1 & 1 would be queue 0).
      for (const affinity of [none, above, 2 ** 32 + 1, 2 ** 33, 1.5]) {
        const e = Fence.empty;
        const h = `affinity ${affinity}`;
        expectKeelError(() => d.queueFill(affinity, e, e, { buffer }, 0, 1), code, `${h}: queueFill`);
        expectKeelError(
          () => d.queueUpdate(affinity, e, e, new Uint8Array(4), { buffer }),
          code,
          `${h}: queueUpdate`,
        );
        expectKeelError(
          () => d.queueCopy(affinity, e, e, { buffer, length: 4 }, { buffer, offset: 8 }),
          code,
          `${h}: queueCopy`,
        );
        expectKeelError(
          () => d.queueRead(affinity, e, e, { buffer }, new Uint8Array(64)),
          code,
          `${h}: queueRead`,
        );
        expectKeelError(
          () => d.queueWrite(affinity, e, e, new Uint8Array(64), { buffer }),
          code,
          `${h}: queueWrite`,
        );
        expectKeelError(() => d.queueBarrier(affinity, e, e), code, `${h}: queueBarrier`);
        expectKeelError(() => d.queueHostCall(affinity, e, e, () => {}), code, `${h}: queueHostCall`);
        expectKeelError(() => d.queueExecute(affinity, e, e, [cb]), code, `${h}: queueExecute`);
        expectKeelError(
          () => d.queueAlloca(affinity, e, e, { usage: BufferUsage.DEFAULT }, 64),
          code,
          `${h}: queueAlloca`,
        );
        expectKeelError(() => d.flush(affinity), code, `${h}: flush`);
      }
      // The command buffer was not consumed by the rejected submissions.
      await ctx.execute([cb]);
    },
  }),
  defineCase({
    id: 'validation.bad-arguments',
    title: 'out-of-range refs, bad patterns, oversized updates and non-fences are rejected at the call',
    tags: ['validation'],
    recordsCommands: false,
    async run(ctx) {
      const d = ctx.device;
      const q = ctx.queue(0);
      const e = Fence.empty;
      const buffer = ctx.buffer(64);
      const readOnly = ctx.buffer(64, BufferUsage.TRANSFER_SOURCE);
      expectKeelError(
        () => d.queueFill(q, e, e, { buffer, offset: 60, length: 8 }, 0, 1),
        ErrorCode.OUT_OF_RANGE,
        'fill past the end',
      );
      expectKeelError(
        () => d.queueFill(q, e, e, { buffer }, 0x1ff, 1),
        ErrorCode.INVALID_ARGUMENT,
        'pattern too wide',
      );
      expectKeelError(
        () => d.queueFill(q, e, e, { buffer, offset: 2 }, 0, 4),
        ErrorCode.INVALID_ARGUMENT,
        'misaligned 4-byte fill',
      );
      expectKeelError(
        () => d.queueFill(q, e, e, { buffer: readOnly }, 0, 1),
        ErrorCode.INVALID_ARGUMENT,
        'fill without TRANSFER_TARGET',
      );
      expectKeelError(
        () => d.queueUpdate(q, e, e, new Uint8Array(65537), { buffer }),
        ErrorCode.INVALID_ARGUMENT,
        'update over 64 KiB',
      );
      expectKeelError(
        () => d.queueRead(q, e, e, { buffer, length: 16 }, new Uint8Array(10)),
        ErrorCode.INVALID_ARGUMENT,
        'read size mismatch',
      );
      expectKeelError(
        () => d.queueCopy(q, e, e, { buffer, offset: 0, length: 16 }, { buffer, offset: 8 }),
        ErrorCode.INVALID_ARGUMENT,
        'overlapping copy',
      );
      expectKeelError(
        () => d.queueBarrier(q, undefined as unknown as Fence, e),
        ErrorCode.INVALID_ARGUMENT,
        'a wait that is not a Fence',
      );
      expectKeelError(
        () => d.queueFill(q, e, e, { slot: 0 } as unknown as { buffer: never }, 0, 1),
        ErrorCode.INVALID_ARGUMENT,
        'a slot ref in a queue operation',
      );
      expectKeelError(
        () => d.createBuffer({ byteLength: -1, usage: BufferUsage.DEFAULT }),
        ErrorCode.INVALID_ARGUMENT,
        'negative size',
      );
      await expectRejection(
        d.createExecutable({ format: 'no-such-format', exports: [] } as never),
        ErrorCode.UNIMPLEMENTED,
        'an unknown executable format',
      );
    },
  }),
  defineCase({
    id: 'validation.foreign-buffer',
    title: "another device's buffer is INVALID_ARGUMENT in queue operations, recordings and tables",
    tags: ['validation'],
    recordsCommands: false,
    async run(ctx, extra) {
      const other = await extra.createDevice();
      ctx.defer(() => other.device.destroy());
      const foreign = other.device.createBuffer({ byteLength: 64, usage: BufferUsage.DEFAULT });
      const d = ctx.device;
      const q = ctx.queue(0);
      const e = Fence.empty;
      const code = ErrorCode.INVALID_ARGUMENT;
      expectKeelError(() => d.queueFill(q, e, e, { buffer: foreign }, 0, 1), code, 'queueFill');
      expectKeelError(() => d.queueRead(q, e, e, { buffer: foreign }, new Uint8Array(64)), code, 'queueRead');
      const direct = ctx.record();
      expectKeelError(() => direct.fill({ buffer: foreign }, 0, 1), code, 'recording a direct ref');
      const slotted = ctx.record('reusable');
      slotted.fill({ slot: 0 }, 0, 1);
      slotted.end();
      expectKeelError(
        () => d.queueExecute(q, e, e, [slotted], [[{ buffer: foreign }]]),
        code,
        'a table entry',
      );
      const theirs = other.device.createCommandBuffer();
      theirs.begin();
      theirs.end();
      expectKeelError(() => d.queueExecute(q, e, e, [theirs]), code, "another device's command buffer");
      expectKeelError(() => d.queueDealloca(q, e, e, foreign), code, 'queueDealloca');
    },
  }),
  defineCase({
    id: 'validation.one-shot-twice',
    title: 'a one-shot command buffer submitted twice is FAILED_PRECONDITION',
    tags: ['validation'],
    recordsCommands: true,
    async run(ctx) {
      const target = ctx.buffer(16);
      const b = ctx.binder();
      const cb = ctx.record();
      cb.fill(b.ref(target), 1, 1);
      cb.end();
      await ctx.execute([cb], [b.table()]);
      expectKeelError(
        () => ctx.device.queueExecute(ctx.queue(0), Fence.empty, Fence.empty, [cb], [b.table()]),
        ErrorCode.FAILED_PRECONDITION,
        'second submission',
      );
      const fresh = ctx.record();
      fresh.end();
      expectKeelError(
        () => ctx.device.queueExecute(ctx.queue(0), Fence.empty, Fence.empty, [fresh, fresh]),
        ErrorCode.FAILED_PRECONDITION,
        'the same one-shot twice in one submission',
      );
      const unfinished = ctx.record();
      expectKeelError(
        () => ctx.device.queueExecute(ctx.queue(0), Fence.empty, Fence.empty, [unfinished]),
        ErrorCode.FAILED_PRECONDITION,
        'a command buffer still recording',
      );
    },
  }),
  defineCase({
    id: 'validation.missing-table',
    title: 'slots without a binding table (or a table too short, or a bad entry) are rejected',
    tags: ['validation'],
    recordsCommands: false,
    async run(ctx) {
      const small = ctx.buffer(8);
      const cb = ctx.record('reusable');
      cb.fill({ slot: 2, offset: 0, length: 16 }, 0, 1);
      cb.end();
      const q = ctx.queue(0);
      const e = Fence.empty;
      const d = ctx.device;
      expectKeelError(() => d.queueExecute(q, e, e, [cb]), ErrorCode.INVALID_ARGUMENT, 'no table');
      expectKeelError(
        () => d.queueExecute(q, e, e, [cb], [[{ buffer: small }]]),
        ErrorCode.INVALID_ARGUMENT,
        'table too short',
      );
      expectKeelError(
        () => d.queueExecute(q, e, e, [cb], [[undefined, undefined, undefined]]),
        ErrorCode.INVALID_ARGUMENT,
        'empty entry for a used slot',
      );
      const err = expectKeelError(
        () => d.queueExecute(q, e, e, [cb], [[undefined, undefined, { buffer: small }]]),
        ErrorCode.OUT_OF_RANGE,
        'a buffer smaller than the commands need',
      );
      check(err.message.includes('2'), `the message names slot 2 (${err.message})`);
      // The command buffer stays usable.
      const ok = ctx.buffer(16);
      await ctx.execute([cb], [[undefined, undefined, { buffer: ok }]]);
    },
  }),
  defineCase({
    id: 'lifecycle.destroy',
    title:
      'destroy() and Symbol.asyncDispose (each on its own device) fail pending work with UNAVAILABLE, set lostReason at once, resolve lost with it, and later calls fail; a second destroy or dispose is harmless',
    tags: ['lifecycle'],
    recordsCommands: false,
    async run(_ctx, extra) {
      for (const how of ['destroy()', 'Symbol.asyncDispose'] as const) {
        const handle = await extra.createDevice();
        const d = handle.device;
        const end = (): Promise<void> =>
          how === 'destroy()' ? d.destroy() : Promise.resolve(d[Symbol.asyncDispose]());
        const buffer = d.createBuffer({ byteLength: 64, usage: BufferUsage.DEFAULT });
        const allocated = d.createSemaphore(0);
        const queued = d.queueAlloca(
          QueueAffinity.ANY,
          Fence.empty,
          Fence.of({ semaphore: allocated, value: 1 }),
          { usage: BufferUsage.DEFAULT },
          64,
        );
        await allocated.wait(1, { timeoutMs: 5000 });
        const gate = d.createSemaphore(0);
        const s = d.createSemaphore(0);
        d.queueFill(
          QueueAffinity.ANY,
          Fence.of({ semaphore: gate, value: 1 }),
          Fence.of({ semaphore: s, value: 1 }),
          { buffer },
          1,
          1,
        );
        checkEqual(d.lostReason, undefined, `${how}: lostReason of a usable device`);
        const ended = end();
        // Known in the same turn, before `lost` resolves: what the device's users check before a call.
        const early = d.lostReason;
        check(KeelError.is(early), `${how}: lostReason is set synchronously`);
        await ended; // resolves (a rejection or a hang fails the case)
        await end(); // idempotent
        checkEqual(s.failure?.code, ErrorCode.UNAVAILABLE, `${how}: pending signal`);
        const reason = await d.lost;
        check(
          reason !== undefined && typeof reason.message === 'string',
          `${how}: lost resolves with a reason`,
        );
        check(
          reason === early && d.lostReason === early,
          `${how}: lost resolves with lostReason, which stays`,
        );
        expectKeelError(
          () => d.queueBarrier(QueueAffinity.ANY, Fence.empty, Fence.empty),
          ErrorCode.FAILED_PRECONDITION,
          `${how}: a queue operation afterwards`,
        );
        expectKeelError(
          () => d.createBuffer({ byteLength: 4, usage: BufferUsage.DEFAULT }),
          ErrorCode.FAILED_PRECONDITION,
          `${how}: createBuffer afterwards`,
        );
        checkEqual(buffer.state, 'destroyed', `${how}: buffer state`);
        checkEqual(queued.state, 'destroyed', `${how}: queue-allocated buffer state`);
        gate.signal(1); // nothing may run or throw now
      }
    },
  }),
  defineCase({
    id: 'validation.alloca-options',
    title:
      "queueAlloca's options must be an object whose only key is `pool`, a string: anything else is INVALID_ARGUMENT naming the option",
    tags: ['validation'],
    recordsCommands: false,
    async run(ctx) {
      const d = ctx.device;
      const q = ctx.queue(0);
      const e = Fence.empty;
      const params = { usage: BufferUsage.DEFAULT };
      const bad: [unknown, string][] = [
        ['ring', 'a string'],
        [5, 'a number'],
        [null, 'null'],
        [[], 'an array'],
        [{ pol: 'ring' }, 'an unknown key'],
        [{ pool: 3 }, 'a pool that is not a string'],
      ];
      for (const [options, what] of bad) {
        const error = expectKeelError(
          () => d.queueAlloca(q, e, e, params, 16, options as never),
          ErrorCode.INVALID_ARGUMENT,
          `options ${what}`,
        );
        check(error.message.includes('queueAlloca'), `options ${what}: the message names queueAlloca`);
      }
      // The default and an explicit `pool: undefined` allocate.
      const { fence } = ctx.fresh();
      const buffer = d.queueAlloca(q, e, fence, params, 16, { pool: undefined });
      await ctx.wait(fence);
      const released = ctx.fresh();
      d.queueDealloca(q, fence, released.fence, buffer);
      await ctx.wait(released.fence);
    },
  }),
  defineCase({
    id: 'validation.host-call-throws',
    title:
      'a host call that throws or rejects anything (undefined and null included) fails its signal: INTERNAL naming queueHostCall with the value as cause, or the KeelError it threw',
    tags: ['validation'],
    recordsCommands: false,
    async run(ctx) {
      const d = ctx.device;
      const q = ctx.queue(0);
      const thrown = [undefined, null, 0, '', new Error('plain')];
      for (const [i, value] of thrown.entries()) {
        for (const how of ['throws', 'rejects'] as const) {
          const { semaphore, fence } = ctx.fresh();
          d.queueHostCall(q, Fence.empty, fence, () => {
            if (how === 'throws') throw value;
            return Promise.reject(value);
          });
          const what = `a host call that ${how} value #${i} (${String(value)})`;
          const error = await expectRejection(ctx.wait(fence), ErrorCode.ABORTED, what);
          const failure = semaphore.failure;
          check(KeelError.is(failure), `${what}: its semaphore failed with a KeelError`);
          checkEqual((failure as KeelError).code, ErrorCode.INTERNAL, `${what}: the failure's code`);
          check(
            (failure as KeelError).message.includes('queueHostCall'),
            `${what}: the message names queueHostCall`,
          );
          check((failure as KeelError).cause === value, `${what}: the cause is the thrown value`);
          check(error.cause === failure, `${what}: the wait's cause is the failure`);
        }
      }
      const own = new KeelError(ErrorCode.DATA_LOSS, 'mine');
      const { semaphore, fence } = ctx.fresh();
      d.queueHostCall(q, Fence.empty, fence, () => {
        throw own;
      });
      await expectRejection(ctx.wait(fence), ErrorCode.ABORTED, 'a host call throwing a KeelError');
      check(semaphore.failure === own, 'a thrown KeelError fails the signal as it is');
    },
  }),
  defineCase({
    id: 'validation.aborted-names-device-and-operation',
    title: "the ABORTED error of an operation whose wait failed names the device's operation and the cause",
    tags: ['validation'],
    recordsCommands: false,
    async run(ctx) {
      const d = ctx.device;
      const q = ctx.queue(0);
      const buffer = ctx.buffer(16);
      const gate = ctx.fresh();
      const out = ctx.fresh();
      d.queueFill(q, gate.fence, out.fence, { buffer }, 0, 1);
      const root = new KeelError(ErrorCode.DATA_LOSS, 'root cause');
      gate.semaphore.fail(root);
      await expectRejection(ctx.wait(out.fence), ErrorCode.ABORTED, 'the fill after a failed wait');
      const failure = out.semaphore.failure;
      check(KeelError.is(failure) && failure.code === ErrorCode.ABORTED, 'the fill failed ABORTED');
      const message = (failure as KeelError).message;
      check(/\S+ queueFill: /.test(message), `the message names the device before queueFill: '${message}'`);
      check(message.includes('root cause'), `the message gives the cause: '${message}'`);
      check((failure as KeelError).cause === root, 'the cause is the original failure');
    },
  }),
  defineCase({
    id: 'validation.execute-affinity-intersection',
    title:
      "queueExecute runs on a queue in the intersection of its mask and every command buffer's affinity (a command buffer made for the last queue, submitted with ANY); an empty intersection is INVALID_ARGUMENT",
    tags: ['validation'],
    recordsCommands: true,
    async run(ctx) {
      const d = ctx.device;
      const last = ctx.queueCount - 1;
      const target = ctx.buffer(16);
      const cb = ctx.record('one-shot', QueueAffinity.of(last));
      cb.fill({ buffer: target }, 7, 1);
      cb.end();
      const { fence } = ctx.fresh();
      d.queueExecute(QueueAffinity.ANY, Fence.empty, fence, [cb]);
      await ctx.wait(fence);
      checkEqual((await ctx.read(target))[15], 7, 'the command buffer ran');
      if (ctx.queueCount >= 2) {
        const other = ctx.record('one-shot', QueueAffinity.of(0));
        other.end();
        const mine = ctx.record('one-shot', QueueAffinity.of(last));
        mine.end();
        expectKeelError(
          () => d.queueExecute(QueueAffinity.ANY, Fence.empty, Fence.empty, [other, mine]),
          ErrorCode.INVALID_ARGUMENT,
          'command buffers with no queue in common',
        );
      }
    },
  }),
];
