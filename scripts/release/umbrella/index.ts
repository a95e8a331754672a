// Type-checks against the installed declarations with Node16 resolution (exports maps and types).
import {
  type Buffer,
  BufferUsage,
  type CommandBuffer,
  createDevice,
  type Device,
  Fence,
  KeelError,
  QueueAffinity,
  Scheduler,
  Tensor,
  trainMlp,
} from 'keel';

export async function roundTrip(): Promise<Uint8Array> {
  const device: Device = await createDevice({ kind: 'cpu', mode: 'sync' });
  const buffer: Buffer = device.createBuffer({ usage: BufferUsage.DEFAULT, byteLength: 4 });
  const out = new Uint8Array(4);
  const done = device.createSemaphore(0);
  device.queueRead(QueueAffinity.ANY, Fence.empty, Fence.of({ semaphore: done, value: 1 }), { buffer }, out);
  await done.wait(1);
  await device.destroy();
  return out;
}
export type { CommandBuffer };
export const kinds: [typeof KeelError, typeof Scheduler, typeof Tensor, typeof trainMlp] = [
  KeelError,
  Scheduler,
  Tensor,
  trainMlp,
];
