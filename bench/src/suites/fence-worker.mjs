// The worker side of the fence suite's ping-pongs (plain ESM: it runs next to the suite and imports
// the built @keel/fence).
// mode 'shared': for v = 1, 2, ...: ping.waitSync(v) (spinning up to 200 µs before it blocks), then
//   pong.signal(v); stops when the main thread fails ping (waitSync throws ABORTED).
// mode 'message': echoes every message back; stops on 'stop'.
import { parentPort, workerData } from 'node:worker_threads';
import { SharedTimelineSemaphore } from '@keel/fence';

if (workerData.mode === 'shared') {
  const ping = SharedTimelineSemaphore.fromHandle(workerData.ping);
  const pong = SharedTimelineSemaphore.fromHandle(workerData.pong);
  for (let v = 1; ; v++) {
    try {
      ping.waitSync(v, { spinMicros: 200 });
    } catch {
      break;
    }
    pong.signal(v);
  }
} else {
  parentPort.on('message', (message) => {
    if (message === 'stop') parentPort.close();
    else parentPort.postMessage(message);
  });
}
