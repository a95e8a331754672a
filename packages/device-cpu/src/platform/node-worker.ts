/** The Node adapter, worker side (see platform.ts): `parentPort` and `workerData`. */
import { parentPort, workerData } from 'node:worker_threads';
import type { FromWorker, ToWorker, WorkerInit } from '../protocol';
import type { ConnectParent, ParentChannel } from './platform';

export const connectParent: ConnectParent = (start) => {
  const port = parentPort;
  if (port === null) throw new Error('cpu worker: not started as a worker thread');
  const channel: ParentChannel = {
    init: workerData as WorkerInit,
    postMessage: (message: FromWorker) => port.postMessage(message),
    onMessage: (handler: (message: ToWorker) => void) => {
      port.on('message', handler);
    },
  };
  start(channel);
};
