// Fences across a worker thread: a SharedTimelineSemaphore lives in a SharedArrayBuffer, so the main
// thread and a worker signal and wait on it directly (Atomics), with no message per step. The two
// threads play ping-pong on one timeline: the main thread writes a value and signals an odd payload;
// the worker waits for it, squares the value in shared memory and signals the next even payload.
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { Fence, SharedTimelineSemaphore } from '@keel/fence';

const rounds = 50;

if (isMainThread) {
  const timeline = new SharedTimelineSemaphore(0, { label: 'ping-pong' });
  const memory = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(new URL(import.meta.url), { workerData: { handle: timeline.handle, memory } });
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  try {
    for (let i = 1; i <= rounds; i++) {
      memory[0] = i;
      timeline.signal(2 * i - 1); // ping: the worker may read memory[0]
      await Fence.of({ semaphore: timeline, value: 2 * i }).wait({ timeoutMs: 10_000 }); // pong
      if (memory[0] !== i * i) throw new Error(`round ${i}: worker answered ${memory[0]}, expected ${i * i}`);
    }
    const exitCode = await exited;
    if (exitCode !== 0) throw new Error(`worker exited with ${exitCode}`);
    console.log(`${rounds} round trips through one shared timeline, payload ${timeline.value}`);
  } catch (error) {
    await worker.terminate();
    throw error;
  }
} else {
  const timeline = SharedTimelineSemaphore.fromHandle(workerData.handle);
  const memory = workerData.memory;
  for (let i = 1; i <= rounds; i++) {
    await timeline.wait(2 * i - 1, { timeoutMs: 10_000 });
    memory[0] = memory[0] * memory[0];
    timeline.signal(2 * i);
  }
  parentPort?.close();
}
