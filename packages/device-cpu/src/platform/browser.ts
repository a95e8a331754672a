/**
 * The browser adapter, main-thread side (see platform.ts): module Web Workers started from the build's
 * worker.js, their init data posted as the first message; `navigator.hardwareConcurrency`.
 *
 * Task mode needs SharedArrayBuffer, which browsers give only to cross-origin isolated pages (served
 * with COOP `same-origin` and COEP `require-corp` or `credentialless`). It is the default where it can
 * run; elsewhere the default is sync mode and an explicit `mode: 'task'` fails with UNAVAILABLE (the
 * device checks `taskModeUnavailable` before it starts anything). The main thread never blocks: it
 * hears completions through `Atomics.waitAsync` (SharedTimelineSemaphore.onReached); only workers
 * use `Atomics.wait`.
 *
 * `new Worker(new URL('./worker.js', import.meta.url), { type: 'module', ... })` is written as one
 * expression so that bundlers (Vite, webpack, Parcel) recognise the worker and bundle it with its
 * imports; with esbuild, copy dist/worker.js beside the bundle (README § Browsers).
 */
import type { WorkerInit } from '../protocol';
import type { MainPlatform, WorkerEvents, WorkerThread } from './platform';

function taskModeUnavailable(): string | undefined {
  if (typeof Worker !== 'function') return 'this environment has no Web Workers';
  const isolated = (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated;
  if (typeof SharedArrayBuffer !== 'function' || isolated === false) {
    return (
      'task mode needs SharedArrayBuffer, which a browser gives only to a cross-origin isolated page ' +
      `(crossOriginIsolated is ${String(isolated)}): serve the page with the headers ` +
      '`Cross-Origin-Opener-Policy: same-origin` and `Cross-Origin-Embedder-Policy: require-corp`, ' +
      "or use mode 'sync'"
    );
  }
  return undefined;
}

function availableParallelism(): number {
  const cores = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator
    ?.hardwareConcurrency;
  return typeof cores === 'number' && cores >= 1 ? Math.floor(cores) : 1;
}

function spawnWorker(init: WorkerInit, name: string, events: WorkerEvents): WorkerThread {
  // Inline, literally: bundlers (Vite, esbuild plugins) recognise this pattern and emit the worker.
  const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module', name });
  let alive = true;
  worker.addEventListener('message', (event: MessageEvent) => events.onMessage(event.data));
  worker.addEventListener('error', (event: Event) => {
    event.preventDefault();
    // An error event without a message: the script did not load (most often a bundle without
    // `worker.js` beside it).
    const message =
      event instanceof ErrorEvent && event.message
        ? event.message
        : "failed to load or run its script, worker.js beside @keel/device-cpu's module (a bundler must emit dist/worker.js beside the bundle: see the device-cpu README § Browsers)";
    events.onError(`crashed: ${message}`);
  });
  worker.addEventListener('messageerror', () => events.onError('sent an unreadable message'));
  worker.postMessage(init);
  return {
    postMessage: (message) => worker.postMessage(message),
    terminate: () => {
      if (alive) {
        alive = false;
        worker.terminate(); // immediate: no exit event follows in browsers
        events.onExit(1);
      }
      return Promise.resolve();
    },
  };
}

export const platform = {
  availableParallelism,
  defaultMode: () => (taskModeUnavailable() ? 'sync' : 'task'),
  taskModeUnavailable,
  spawnWorker,
} satisfies MainPlatform;
