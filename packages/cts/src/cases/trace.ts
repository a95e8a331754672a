/**
 * Traces (hal Trace, `device.startTrace`): the export is well-formed Chrome trace event JSON, holds
 * every queue operation with its bytes, and one dispatch entry per dispatch named by its export; the
 * options are checked; one trace records at a time; dispose stops it; operations after the stop are
 * not recorded; an operation called while a trace recorded reports its completion (and its
 * dispatches) even when it runs after `stop()`, and its failure when the device is destroyed first;
 * every trace of one device has the device's pid, another device's traces another one.
 */
import { ErrorCode, Fence } from '@keel/fence';
import { BufferUsage, QueueAffinity, type Trace } from '@keel/hal';
import { check, checkEqual, expectKeelError } from '../assertions';
import { defineCase } from '../case';
import type { CtsContext } from '../context';
import { chromeTraceProblems, traceEventsOf } from '../trace-schema';

function start(
  ctx: CtsContext,
  options?: Parameters<NonNullable<CtsContext['device']['startTrace']>>[0],
): Trace {
  const startTrace = ctx.device.startTrace;
  check(typeof startTrace === 'function', 'the device implements startTrace');
  return ctx.device.startTrace!(options);
}

/** A reusable command buffer of negate then double over `n` i32 (2 dispatches) and its table. */
async function negateDouble(ctx: CtsContext, n: number) {
  const exe = await ctx.executable('negateDouble');
  const a = ctx.buffer(n * 4);
  const b = ctx.buffer(n * 4);
  const binder = ctx.binder();
  const cb = ctx.record('reusable');
  cb.dispatch(exe, 'negate', { workload: [n], constants: [n], bindings: [binder.ref(a), binder.ref(b)] });
  cb.barrier();
  cb.dispatch(exe, 'double', { workload: [n], constants: [n], bindings: [binder.ref(b), binder.ref(a)] });
  cb.end();
  return { cb, table: binder.table() };
}

/** The pid of every event of `json` (one entry per distinct pid). */
function pidsOf(json: unknown): Set<number> {
  return new Set((json as { traceEvents: { pid: number }[] }).traceEvents.map((e) => e.pid));
}

/** Runs write → execute(negate, double) ×`executes` → fill → copy → read on queue 0. */
async function workload(ctx: CtsContext, executes: number): Promise<void> {
  const n = 256;
  const exe = await ctx.executable('negateDouble');
  const a = ctx.buffer(n * 4);
  const b = ctx.buffer(n * 4);
  const c = ctx.buffer(n * 4);
  await ctx.write(
    a,
    Int32Array.from({ length: n }, (_, i) => i - 7),
  );
  const binder = ctx.binder();
  const cb = ctx.record('reusable');
  cb.dispatch(exe, 'negate', { workload: [n], constants: [n], bindings: [binder.ref(a), binder.ref(b)] });
  cb.barrier();
  cb.dispatch(exe, 'double', { workload: [n], constants: [n], bindings: [binder.ref(b), binder.ref(c)] });
  cb.end();
  for (let i = 0; i < executes; i++) await ctx.execute([cb], [binder.table()]);
  const { fence } = ctx.fresh();
  ctx.device.queueFill(ctx.queue(0), Fence.empty, fence, { buffer: b }, 0, 4);
  await ctx.wait(fence);
  const copied = ctx.fresh();
  ctx.device.queueCopy(ctx.queue(0), Fence.empty, copied.fence, { buffer: c }, { buffer: b });
  await ctx.wait(copied.fence);
  const out = await ctx.readI32(b);
  checkEqual(out[10], -2 * 3, 'double(negate(3))');
}

export const traceCases = [
  defineCase({
    id: 'trace.chrome-json',
    title: 'a trace exports Chrome trace JSON with every queue operation and one entry per dispatch',
    tags: ['trace'],
    recordsCommands: true,
    async run(ctx) {
      await ctx.executable('negateDouble');
      const executes = 3;
      const trace = start(ctx);
      check(trace.recording, 'a new trace records');
      await workload(ctx, executes);
      trace.stop();
      check(!trace.recording, 'stop() ends the recording');
      const json = JSON.parse(JSON.stringify(await trace.toChromeTrace())) as unknown;
      const problems = chromeTraceProblems(json);
      check(problems.length === 0, `trace schema: ${problems.slice(0, 5).join('; ')}`);
      const ops = traceEventsOf(json, 'queue');
      const count = (name: string): number => ops.filter((e) => e.name === name).length;
      checkEqual(count('queueExecute'), executes, 'queueExecute events');
      for (const name of ['queueWrite', 'queueFill', 'queueCopy', 'queueRead']) {
        checkEqual(count(name), 1, `${name} events`);
      }
      const read = ops.find((e) => e.name === 'queueRead');
      checkEqual(read?.args?.bytes, 256 * 4, 'bytes of the queueRead event');
      const dispatches = traceEventsOf(json, 'dispatch');
      checkEqual(dispatches.length, 2 * executes, 'dispatch events (2 per execute)');
      checkEqual(
        dispatches.filter((e) => e.name === 'negate').length,
        executes,
        "dispatch events named 'negate'",
      );
      checkEqual(
        dispatches.filter((e) => e.name === 'double').length,
        executes,
        "dispatch events named 'double'",
      );
      for (const d of dispatches) {
        check(typeof d.args?.timing === 'string', `dispatch '${d.name}' says where its time comes from`);
        check(
          typeof d.args?.executable === 'string' && d.args.executable !== '',
          `dispatch '${d.name}' names its executable`,
        );
      }
      // One `execute` number per traced execute, each with its two dispatches.
      const executeIds = new Set(dispatches.map((d) => d.args?.execute));
      checkEqual(executeIds.size, executes, 'distinct args.execute of the dispatch events');
      const pids = new Set((json as { traceEvents: { pid: number }[] }).traceEvents.map((e) => e.pid));
      checkEqual(pids.size, 1, 'one pid per device');
      // JSON.stringify(trace) is the same export once everything arrived.
      checkEqual(JSON.stringify(trace), JSON.stringify(await trace.toChromeTrace()), 'JSON.stringify(trace)');
    },
  }),
  defineCase({
    id: 'trace.lifecycle',
    title: 'trace options are checked, one trace records at a time, dispose stops it',
    tags: ['trace'],
    recordsCommands: false,
    async run(ctx) {
      expectKeelError(() => start(ctx, { maxEvents: -1 }), ErrorCode.INVALID_ARGUMENT, 'maxEvents -1');
      expectKeelError(
        () => start(ctx, { bogus: true } as never),
        ErrorCode.INVALID_ARGUMENT,
        'an unknown trace option',
      );
      const first = start(ctx, { dispatches: false });
      expectKeelError(() => start(ctx), ErrorCode.FAILED_PRECONDITION, 'a second trace while one records');
      checkEqual(first.dispatchTiming, 'none', 'dispatchTiming without dispatches');
      first[Symbol.dispose]();
      check(!first.recording, 'dispose stops the trace');
      const b = ctx.buffer(64);
      await ctx.write(b, new Uint8Array(64));
      const second = start(ctx);
      await ctx.write(b, new Uint8Array(64));
      second.stop();
      await ctx.write(b, new Uint8Array(64));
      const firstJson = await first.toChromeTrace();
      checkEqual(traceEventsOf(firstJson, 'queue').length, 0, 'events of a trace stopped before any work');
      const secondJson = await second.toChromeTrace();
      checkEqual(
        traceEventsOf(secondJson, 'queue').filter((e) => e.name === 'queueWrite').length,
        1,
        'queueWrite events between start and stop',
      );
    },
  }),
  defineCase({
    id: 'trace.after-stop',
    title: 'an execute called while a trace recorded, run after stop(), reports itself and its dispatches',
    tags: ['trace'],
    recordsCommands: true,
    async run(ctx) {
      const { cb, table } = await negateDouble(ctx, 64);
      const gate = ctx.semaphore();
      const { fence } = ctx.fresh();
      const trace = start(ctx);
      ctx.device.queueExecute(ctx.queue(0), Fence.of({ semaphore: gate, value: 1 }), fence, [cb], [table]);
      trace.stop();
      gate.signal(1);
      await ctx.wait(fence);
      const json = JSON.parse(JSON.stringify(await trace.toChromeTrace())) as unknown;
      const problems = chromeTraceProblems(json);
      check(problems.length === 0, `trace schema: ${problems.slice(0, 5).join('; ')}`);
      checkEqual(
        traceEventsOf(json, 'queue').filter((e) => e.name === 'queueExecute').length,
        1,
        'queueExecute events',
      );
      const dispatches = traceEventsOf(json, 'dispatch');
      checkEqual(
        dispatches
          .map((d) => d.name)
          .sort()
          .join(','),
        'double,negate',
        'dispatch events of the execute that ran after stop()',
      );
    },
  }),
  defineCase({
    id: 'trace.destroyed',
    title: 'an operation pending when the device is destroyed is in the trace with its error',
    tags: ['trace', 'lifecycle'],
    recordsCommands: false,
    async run(_ctx, extra) {
      const handle = await extra.createDevice();
      const device = handle.device;
      try {
        const buffer = device.createBuffer({ byteLength: 64, usage: BufferUsage.DEFAULT });
        const gate = device.createSemaphore(0);
        const signal = device.createSemaphore(0);
        const trace = device.startTrace!();
        device.queueFill(
          QueueAffinity.of(0),
          Fence.of({ semaphore: gate, value: 1 }),
          Fence.of({ semaphore: signal, value: 1 }),
          { buffer },
          0,
          4,
        );
        const failure = signal.wait(1, { timeoutMs: 5000 }).then(
          () => undefined,
          (error: unknown) => error,
        );
        await device.destroy();
        const error = await failure;
        check(error !== undefined, 'the pending queueFill failed when the device was destroyed');
        const json = JSON.parse(JSON.stringify(await trace.toChromeTrace())) as unknown;
        const problems = chromeTraceProblems(json);
        check(problems.length === 0, `trace schema: ${problems.slice(0, 5).join('; ')}`);
        const fills = traceEventsOf(json, 'queue').filter((e) => e.name === 'queueFill');
        checkEqual(fills.length, 1, 'queueFill events of the destroyed device');
        const message = fills[0]?.args?.error;
        check(
          typeof message === 'string' && message.startsWith('UNAVAILABLE'),
          `the queueFill event's args.error names UNAVAILABLE (got ${JSON.stringify(message)})`,
        );
      } finally {
        await device.destroy();
      }
    },
  }),
  defineCase({
    id: 'trace.pid',
    title: "every trace of a device exports the device's pid; another device's traces another pid",
    tags: ['trace'],
    recordsCommands: false,
    async run(ctx, extra) {
      const traceOf = async (device: CtsContext['device']): Promise<Set<number>> => {
        const trace = device.startTrace!();
        const signal = device.createSemaphore(0);
        device.queueBarrier(QueueAffinity.of(0), Fence.empty, Fence.of({ semaphore: signal, value: 1 }));
        await signal.wait(1, { timeoutMs: ctx.timeoutMs });
        trace.stop();
        return pidsOf(await trace.toChromeTrace());
      };
      start(ctx).stop();
      const first = await traceOf(ctx.device);
      const second = await traceOf(ctx.device);
      checkEqual(first.size, 1, 'pids in one trace');
      checkEqual([...second].join(), [...first].join(), 'pid of a second trace of the same device');
      const handle = await extra.createDevice();
      try {
        const other = await traceOf(handle.device);
        checkEqual(other.size, 1, "pids in the other device's trace");
        check(!other.has([...first][0]!), "another device's trace has another pid");
      } finally {
        await handle.device.destroy();
      }
    },
  }),
];
