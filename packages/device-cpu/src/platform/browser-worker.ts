/**
 * The browser adapter, worker side (see platform.ts): the module worker's global scope. The first
 * message is the worker's init data; the listener is installed when this module is evaluated, so
 * messages that arrive before worker.ts installs its handler wait here, in order.
 */
import type { FromWorker, ToWorker, WorkerInit } from '../protocol';
import type { ConnectParent, ParentChannel } from './platform';

interface WorkerScope {
  postMessage(message: unknown): void;
  addEventListener(type: 'message', listener: (event: MessageEvent) => void): void;
}

const scope = globalThis as unknown as WorkerScope;
const early: ToWorker[] = [];
let init: WorkerInit | undefined;
let handler: ((message: ToWorker) => void) | undefined;
let starter: ((channel: ParentChannel) => void) | undefined;

function startIfReady(): void {
  if (!init || !starter) return;
  const start = starter;
  starter = undefined;
  start({
    init,
    postMessage: (message: FromWorker) => scope.postMessage(message),
    onMessage: (next: (message: ToWorker) => void) => {
      handler = next;
      for (const message of early.splice(0)) next(message);
    },
  });
}

scope.addEventListener('message', (event: MessageEvent) => {
  if (!init) {
    init = event.data as WorkerInit;
    startIfReady();
  } else if (handler) handler(event.data as ToWorker);
  else early.push(event.data as ToWorker);
});

export const connectParent: ConnectParent = (start) => {
  starter = start;
  startIfReady();
};
