/**
 * The Node adapter, main-thread side (see platform.ts): worker_threads workers started from dist's
 * worker.js with their init data as `workerData`, unref'd while idle; `os.availableParallelism`.
 * Task mode is always available and the default.
 */
import { availableParallelism as nodeParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { WorkerInit } from '../protocol';
import type { MainPlatform, WorkerEvents, WorkerThread } from './platform';

function spawnWorker(init: WorkerInit, name: string, events: WorkerEvents): WorkerThread {
  // The literal `new URL('./worker.js', import.meta.url)` resolves beside the bundle (dist/node/worker.js).
  const worker = new Worker(new URL('./worker.js', import.meta.url), { workerData: init, name });
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
