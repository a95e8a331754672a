/**
 * Entry point of a task-mode worker thread (built to dist/node/worker.js for worker_threads and to
 * dist/worker.js, a Web Worker, in the browser build, through the platform adapter). One worker belongs to one queue;
 * it keeps the device's slabs, the queue's plans and the loaded kernels, and runs every operation
 * posted to it with an Executor over the queue's shared control block. Completion is signalled on the
 * queue's SharedTimelineSemaphore; failures and load results are posted back.
 *
 * A kernel that throws, or returns a promise that rejects, fails its operation (the worker carries on).
 * While an async kernel's workgroup is pending the executor is suspended: execute messages that arrive
 * meanwhile wait in order. Anything that escapes a handler is a bug: it ends the worker, and the main
 * thread treats that as a lost device.
 */
import { ErrorCode, KeelError, SharedTimelineSemaphore } from '@keel/fence';
import { CTL_WORDS } from './control-block';
import {
  Executor,
  type ExecutorHost,
  type LoadedKernel,
  type PlanRuntime,
  planRuntime,
  type Suspension,
} from './executor';
import { withKernelImportHint } from './kernel-import-hint';
import { connectParent } from './platform/current-worker';
import type { ParentChannel } from './platform/platform';
import { FROM_WORKER, type FromWorker, type LoadMessage, type ToWorker } from './protocol';

// Set once the platform adapter has the worker's init data (see connectParent at the end).
let parent!: ParentChannel;
let timeline!: SharedTimelineSemaphore;
let executor!: Executor;

const slabs: (ArrayBufferLike | undefined)[] = [];
const kernels: (LoadedKernel[] | undefined)[] = [];
const plans = new Map<number, PlanRuntime>();
const modules = new Map<string, Promise<Record<string, unknown>>>();

function post(message: FromWorker): void {
  parent.postMessage(message);
}

const host: ExecutorHost = {
  slabs,
  kernel(executable: number, entry: number): LoadedKernel | undefined {
    return kernels[executable]?.[entry];
  },
  reportFailure(seq: number, error: unknown): void {
    post({ from: FROM_WORKER, t: 'failed', seq, error: KeelError.toStructured(error) });
  },
  reportComplete(seq: number): void {
    timeline.signal(seq + 1);
  },
};

async function load(message: LoadMessage): Promise<void> {
  try {
    let module = modules.get(message.url);
    if (!module) {
      module = import(/* @vite-ignore */ message.url) as Promise<Record<string, unknown>>;
      modules.set(message.url, module);
    }
    let namespace: Record<string, unknown>;
    try {
      namespace = await module;
    } catch (error) {
      modules.delete(message.url);
      throw error;
    }
    const loaded: LoadedKernel[] = [];
    for (let i = 0; i < message.names.length; i++) {
      const name = message.names[i]!;
      const fn = namespace[name];
      if (typeof fn !== 'function') {
        throw new KeelError(
          ErrorCode.NOT_FOUND,
          `executable '${message.label}': module ${message.url} has no exported function '${name}'`,
        );
      }
      loaded.push({
        name: `kernel '${name}' of executable '${message.label}'`,
        fn: fn as LoadedKernel['fn'],
        workgroupSize: [message.sizes[3 * i]!, message.sizes[3 * i + 1]!, message.sizes[3 * i + 2]!],
      });
    }
    kernels[message.id] = loaded;
    post({ from: FROM_WORKER, t: 'loaded', id: message.id });
  } catch (error) {
    post({
      from: FROM_WORKER,
      t: 'loaded',
      id: message.id,
      error: KeelError.toStructured(withKernelImportHint(error)),
    });
  }
}

interface WaitingExecute {
  readonly data: Float64Array;
  readonly scratch: readonly (Int32Array | undefined)[] | undefined;
}

/** Execute messages that arrived while the executor was suspended on an async kernel. */
const waiting: WaitingExecute[] = [];

/** Resumes the executor after each promise it suspended on; then runs the waiting operations. */
async function settle(first: Suspension): Promise<void> {
  await executor.settle(first);
  while (!executor.suspended && waiting.length > 0) {
    const next = waiting.shift()!;
    execute(next.data, next.scratch);
  }
}

/** Runs an encoded execute operation (see ExecuteMessage). */
function execute(data: Float64Array, scratch: readonly (Int32Array | undefined)[] | undefined): void {
  if (executor.suspended) {
    waiting.push({ data, scratch });
    return;
  }
  const count = data[1]!;
  const runtimes: PlanRuntime[] = [];
  const tables: Float64Array[] = [];
  let at = 2 + 2 * count;
  for (let i = 0; i < count; i++) {
    const id = data[2 + 2 * i]!;
    const length = data[3 + 2 * i]!;
    const runtime = plans.get(id);
    if (!runtime) throw new Error(`cpu worker: plan ${id} was never sent`);
    runtimes.push(runtime);
    tables.push(data.subarray(at, at + length));
    at += length;
  }
  const pending = executor.execute(data[0]!, runtimes, tables, scratch);
  if (pending) void settle(pending);
}

function onMessage(message: ToWorker): void {
  if (message instanceof Float64Array) {
    execute(message, undefined);
    return;
  }
  switch (message.t) {
    case 'exec':
      execute(message.data, message.scratch);
      return;
    case 'plan':
      plans.set(message.id, planRuntime(message.arrays));
      return;
    case 'plan-free':
      plans.delete(message.id);
      return;
    case 'slab':
      slabs[message.index] = message.memory;
      return;
    case 'slab-free':
      slabs[message.index] = undefined;
      return;
    case 'load':
      void load(message);
      return;
    case 'unload':
      kernels[message.id] = undefined;
      return;
    case 'profile':
      executor.setProfile(message.ring);
      return;
  }
}

connectParent((channel) => {
  parent = channel;
  const init = channel.init;
  timeline = SharedTimelineSemaphore.fromHandle(init.timeline);
  const control = new Int32Array(init.control, 0, CTL_WORDS);
  executor = new Executor(control, true, host, init.workerIndex);
  channel.onMessage(onMessage);
});
