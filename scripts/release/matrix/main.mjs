// A consumer of the umbrella `keel` tarball (which brings every runtime @keel package and @keel/mlp, its
// CLI's MLP). It trains the reference MLP of @keel/mlp for a few steps on the CPU device: the kernel
// module (@keel/mlp's dist) and the worker script (@keel/device-cpu's dist) must load when installed.
import { trainMlp } from '@keel/mlp';
import { BufferUsage, createDevice, Fence, QueueAffinity, TimelineSemaphore } from 'keel';

const device = await createDevice({ kind: 'cpu', mode: 'sync' });
const buffer = device.createBuffer({ usage: BufferUsage.DEFAULT, byteLength: 16 });
const semaphore = new TimelineSemaphore(0);
const out = new Uint32Array(4);
device.queueFill(QueueAffinity.ANY, Fence.empty, Fence.of({ semaphore, value: 1 }), { buffer }, 0xc0ffee, 4);
device.queueRead(
  QueueAffinity.ANY,
  Fence.of({ semaphore, value: 1 }),
  Fence.of({ semaphore, value: 2 }),
  { buffer },
  out,
);
await semaphore.wait(2, { timeoutMs: 5000 });
await device.destroy();
if (out.some((v) => v !== 0xc0ffee)) throw new Error(`fill/read: got ${Array.from(out)}`);

const result = await trainMlp({ device: 'cpu', steps: 5 });
const losses = Array.from(result.losses, (l) => l.toFixed(3)).join(' ');
if (!(result.losses[4] < result.losses[0])) throw new Error(`the loss did not fall: ${losses}`);
console.log(`cpu fill/read ok; trainMlp 5 steps on ${result.deviceName}: loss ${losses}`);
process.exit(0);
