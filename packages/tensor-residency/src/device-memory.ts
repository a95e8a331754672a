/**
 * Where device copies get their memory (internal). Two strategies:
 * - 'queue-ordered' (default): `queueAlloca` / `queueDealloca`. The buffer is usable by operations
 *   ordered after the alloca's signal; the dealloca waits on the copy's last uses, so eviction never
 *   blocks the host and the device's allocator may hand the block to the next copy as soon as those
 *   uses are done (same-queue reuse without any waiting).
 * - 'buffers': `createBuffer` / `destroy()`, destroyed by a host callback once the last uses are
 *   reached. For devices or pools where queue-ordered allocation is not wanted.
 */
import { Fence } from '@keel/fence';
import type { Buffer, BufferUsage, Device, QueueAffinity } from '@keel/hal';
import { compactUses, usesOver } from './fences';

export type AllocationStrategy = 'queue-ordered' | 'buffers';

export interface DeviceMemory {
  /** A buffer of `bytes` and the fence after which operations may use it. */
  allocate(bytes: number, label: string): { buffer: Buffer; ready: Fence };
  /** Frees `buffer` once `after` is reached (or failed: a failed use is over). */
  free(buffer: Buffer, after: Fence): void;
}

/** A fresh single-use signal fence on `device`. */
export function freshSignal(device: Device): Fence {
  return Fence.of({ semaphore: device.createSemaphore(0), value: 1 });
}

export function deviceMemory(
  strategy: AllocationStrategy,
  device: Device,
  affinity: QueueAffinity,
  usage: BufferUsage,
): DeviceMemory {
  if (strategy === 'queue-ordered') {
    return {
      allocate(bytes, label) {
        const ready = freshSignal(device);
        const buffer = device.queueAlloca(affinity, Fence.empty, ready, { usage, affinity, label }, bytes);
        return { buffer, ready };
      },
      free(buffer, after) {
        if (buffer.state !== 'live') return;
        device.queueDealloca(affinity, compactUses(after), Fence.empty, buffer);
      },
    };
  }
  return {
    allocate(bytes, label) {
      return {
        buffer: device.createBuffer({ usage, affinity, label, byteLength: bytes }),
        ready: Fence.empty,
      };
    },
    free(buffer, after) {
      destroyWhenOver(buffer, after);
    },
  };
}

/** Destroys a caller-owned buffer once `after` is reached or failed (at once if it already is). */
export function destroyWhenOver(buffer: Buffer, after: Fence): void {
  const destroy = (): void => {
    try {
      if (buffer.state === 'live') buffer.destroy();
    } catch {
      // The device was destroyed in the meantime: its buffers are gone already.
    }
  };
  const uses = compactUses(after);
  if (usesOver(uses)) destroy();
  else uses.onReached(destroy);
}
