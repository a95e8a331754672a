/**
 * The Node adapter, main-thread side (see platform.ts): worker_threads workers started from dist's
 * worker.js with their init data as `workerData`, unref'd while idle; `os.availableParallelism`.
 * Task mode is always available and the default.
 */
import { availableParallelism as nodeParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { WorkerInit } from '../protocol';
import type { MainPlatform, WorkerEvents, WorkerThread } from './platform';

/** `process.execArgv` without `--input-type` (both spellings), or undefined (inherit) where it has none. */
function workerExecArgv(): string[] | undefined {
  const argv = process.execArgv;
  if (!argv.some((arg) => arg.startsWith('--input-type'))) return undefined;
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--input-type')
      i++; // its value is the next argument
    else if (!arg.startsWith('--input-type=')) out.push(arg);
  }
  return out;
}

function spawnWorker(init: WorkerInit, name: string, events: WorkerEvents): WorkerThread {
  // The literal `new URL('./worker.js', import.meta.url)` resolves beside the bundle (dist/node/worker.js).
  const worker = new Worker(new URL('./worker.js', import.meta.url), {
    workerData: init,
    name,
    execArgv: workerExecArgv(),
  });
  worker.on('message', events.onMessage);
  worker.on('error', (error: Error) => events.onError(`crashed: ${error.message}`));
  worker.on('messageerror', (error: Error) => events.onError(`sent an unreadable message: ${error.message}`));
  worker.on('exit', events.onExit);
  return {
    postMessage: (message) => worker.postMessage(message),
    ref: () => worker.ref(),
    unref: () => worker.unref(),
    terminate: async () => {
      await worker.terminate();
    },
  };
}

export const platform = {
  availableParallelism: nodeParallelism,
  defaultMode: () => 'task',
  taskModeUnavailable: () => undefined,
  spawnWorker,
} satisfies MainPlatform;
