/**
 * Streaming: processing a tensor in chunks through a small window of device memory, for tensors larger
 * than a manager's budget (Glow's "tensor streaming"). The tensor's up-to-date bytes come from (and, for
 * writes, go back to) its host copy; device copies elsewhere are not involved.
 *
 * Each chunk: (reads) upload the chunk's bytes into a chunk buffer, call the caller's function with the
 * buffer and the fence to wait on, then (writes) read the chunk back into the host storage once the
 * caller's fence is reached. Two chunk buffers alternate when two fit in the budget, so the upload of
 * chunk i+1 overlaps the processing of chunk i. Everything is enqueued at once, ordered by fences; the
 * call never blocks and returns the fence after which every chunk is done.
 *
 * The host storage counts as used by the stream from its start until every chunk's transfer is over
 * (a hold timepoint in its `uses`, released once they all are), so a host write made meanwhile (from
 * the callback, say) goes to fresh storage (copy on write) and every chunk sees the version the stream
 * started with; pinned storage dropped meanwhile is destroyed only after the stream's last use of it.
 */
import { ErrorCode, Fence, KeelError, TimelineSemaphore } from '@keel/fence';
import type { Buffer, Device, DirectBufferRef, QueueAffinity } from '@keel/hal';
import type { CounterSet } from './counters';
import { type DeviceMemory, freshSignal } from './device-memory';
import { bytesPerElement } from './dtype';
import { addUse, compactUses, whenUsesOver } from './fences';
import { ensureStorage, prepareHostRead } from './host-access';
import type { HostStorage } from './host-storage';
import type { Access } from './lease';
import type { TensorState } from './tensor-state';

/** Options of `ResidencyManager.stream`. */
export interface StreamOptions {
  /** What the callback does with each chunk (default 'read'). 'write' skips the uploads. */
  readonly access?: Access;
  /**
   * Bytes per chunk: a positive multiple of 4 and of the element size, at most the budget. Default:
   * half the budget (so that two chunk buffers alternate), rounded down to that multiple.
   */
  readonly chunkBytes?: number;
}

/** One chunk handed to the stream callback. */
export interface StreamChunk {
  readonly index: number;
  /** Chunk count of the whole stream. */
  readonly count: number;
  /** Where the chunk starts in the tensor, in bytes and in elements. */
  readonly byteOffset: number;
  readonly elementOffset: number;
  /** The chunk's bytes of the tensor (the last chunk may be shorter) and its elements. */
  readonly byteLength: number;
  readonly elementCount: number;
  /** The chunk buffer: the chunk's bytes start at offset 0 (`ref` covers exactly them). */
  readonly buffer: Buffer;
  readonly ref: DirectBufferRef;
  /** Wait on this before touching the buffer. */
  readonly wait: Fence;
}

/**
 * Processes one chunk: enqueue work waiting on `chunk.wait` and return the fence after which it no
 * longer uses `chunk.buffer` (for write access: after which the chunk holds its new bytes).
 */
export type StreamCallback = (chunk: StreamChunk) => Fence;

/** What streaming needs from its manager (internal). */
export interface StreamHost {
  readonly label: string;
  readonly device: Device;
  readonly affinity: QueueAffinity;
  readonly budgetBytes: number;
  readonly counters: CounterSet;
  readonly memory: DeviceMemory;
  /** Evicts until `bytes` more fit in the budget (RESOURCE_EXHAUSTED if they cannot). */
  makeRoom(bytes: number, what: string): void;
}

interface Slot {
  readonly buffer: Buffer;
  free: Fence;
}

function chunkSize(
  host: StreamHost,
  state: TensorState,
  requested: number | undefined,
  what: string,
): number {
  const align = bytesPerElement(state.dtype) === 8 ? 8 : 4;
  if (requested === undefined) {
    const half = Math.floor(host.budgetBytes / 2 / align) * align;
    const size = half >= align ? half : Math.floor(host.budgetBytes / align) * align;
    if (size < align) {
      throw new KeelError(
        ErrorCode.RESOURCE_EXHAUSTED,
        `${what}: the ${host.budgetBytes}-byte budget of residency manager '${host.label}' holds no chunk of ${state.describe()}`,
      );
    }
    return Math.min(size, state.storageBytes);
  }
  if (!Number.isSafeInteger(requested) || requested <= 0 || requested % align !== 0) {
    throw new KeelError(
      ErrorCode.INVALID_ARGUMENT,
      `${what}: chunkBytes ${requested} must be a positive multiple of ${align} for ${state.describe()}`,
    );
  }
  if (requested > host.budgetBytes) {
    throw new KeelError(
      ErrorCode.RESOURCE_EXHAUSTED,
      `${what}: chunkBytes ${requested} exceed the ${host.budgetBytes}-byte budget of residency manager '${host.label}'`,
    );
  }
  return Math.min(requested, state.storageBytes);
}

function upload(
  host: StreamHost,
  storage: HostStorage,
  slot: Slot,
  ready: Fence,
  off: number,
  len: number,
): Fence {
  const { device, affinity, counters } = host;
  const signal = freshSignal(device);
  const wait = Fence.join(ready, slot.free);
  const target = { buffer: slot.buffer, offset: 0, length: len };
  if (storage.isPinnedTo(device) && storage.pinned !== undefined) {
    device.queueCopy(
      affinity,
      wait,
      signal,
      { buffer: storage.pinned.buffer, offset: off, length: len },
      target,
    );
    counters.pinnedTransferBytes += len;
  } else {
    device.queueWrite(affinity, wait, signal, storage.bytes.subarray(off, off + len), target);
    counters.hostCopyBytes += len;
  }
  counters.hostToDeviceBytes += len;
  counters.transfers++;
  return signal;
}

function readBack(
  host: StreamHost,
  storage: HostStorage,
  slot: Slot,
  wait: Fence,
  off: number,
  len: number,
): Fence {
  const { device, affinity, counters } = host;
  const signal = freshSignal(device);
  const source = { buffer: slot.buffer, offset: 0, length: len };
  if (storage.isPinnedTo(device) && storage.pinned !== undefined) {
    device.queueCopy(affinity, wait, signal, source, {
      buffer: storage.pinned.buffer,
      offset: off,
      length: len,
    });
    counters.pinnedTransferBytes += len;
  } else {
    device.queueRead(affinity, wait, signal, source, storage.bytes.subarray(off, off + len));
    counters.hostCopyBytes += len;
  }
  counters.deviceToHostBytes += len;
  counters.transfers++;
  return signal;
}

/** The streaming algorithm behind ResidencyManager.stream (see there for the contract). */
export function streamThrough(
  host: StreamHost,
  state: TensorState,
  options: StreamOptions,
  callback: StreamCallback,
  what: string,
): Fence {
  const access = options.access ?? 'read';
  const reads = access !== 'write';
  const writes = access !== 'read';
  state.checkLive(what);
  if (writes && state.openLeases > 0) {
    throw new KeelError(
      ErrorCode.FAILED_PRECONDITION,
      `${what}: ${state.describe()} has ${state.openLeases} open lease(s); streaming it for ${access} needs exclusive access`,
    );
  }
  const size = chunkSize(host, state, options.chunkBytes, what);
  let storage: HostStorage;
  let hostReady = Fence.empty;
  if (reads) {
    const prepared = prepareHostRead(state, what);
    storage = prepared.storage;
    hostReady = prepared.ready;
  } else {
    state.checkNoWriter(what);
    storage = ensureStorage(state, what);
  }
  const total = state.storageBytes;
  const count = Math.ceil(total / size);
  const slotCount = count > 1 && 2 * size <= host.budgetBytes ? 2 : 1;
  host.makeRoom(slotCount * size, what);
  const slots: Slot[] = [];
  const { counters, memory } = host;
  for (let i = 0; i < slotCount; i++) {
    const { buffer, ready } = memory.allocate(size, `${state.label ?? 'tensor'} (stream chunk ${i})`);
    slots.push({ buffer, free: ready });
  }
  counters.addResident(slotCount * size);
  // Chunk write-backs land in the host storage: they wait for every earlier user of it.
  const storageUses = compactUses(storage.uses);
  // From here on the stream uses the storage: a host write during the callbacks must not change it.
  const hold = new TimelineSemaphore(0, { label: `${state.label ?? 'tensor'} (stream hold)` });
  storage.uses = addUse(storage.uses, Fence.of({ semaphore: hold, value: 1 }));
  const element = bytesPerElement(state.dtype);
  const finals: Fence[] = [];
  let failure: unknown;
  state.openLeases++;
  if (writes) state.writeLeases++;
  try {
    for (let index = 0; index < count; index++) {
      const off = index * size;
      const len = Math.min(size, total - off);
      const slot = slots[index % slotCount] as Slot;
      let chunkWait = slot.free;
      if (reads) chunkWait = upload(host, storage, slot, hostReady, off, len);
      else counters.transfersAvoided++;
      const byteLength = Math.min(len, state.byteLength - off);
      const after: unknown = callback(
        Object.freeze({
          index,
          count,
          byteOffset: off,
          elementOffset: off / element,
          byteLength,
          elementCount: Math.floor(byteLength / element),
          buffer: slot.buffer,
          ref: Object.freeze({ buffer: slot.buffer, offset: 0, length: byteLength }),
          wait: chunkWait,
        }),
      );
      if (!(after instanceof Fence)) {
        throw new KeelError(
          ErrorCode.INVALID_ARGUMENT,
          `${what}: the callback for chunk ${index} of ${state.describe()} must return a Fence`,
        );
      }
      if (writes) {
        slot.free = readBack(host, storage, slot, Fence.join(chunkWait, after, storageUses), off, len);
      } else {
        slot.free = Fence.join(chunkWait, after);
      }
      finals.push(slot.free);
      counters.streamedChunks++;
    }
  } catch (error) {
    failure = error;
  } finally {
    state.openLeases--;
    if (writes) state.writeLeases--;
  }
  for (const slot of slots) memory.free(slot.buffer, slot.free);
  counters.residentBytes -= slotCount * size;
  const done = Fence.join(...finals);
  storage.uses = addUse(storage.uses, done);
  whenUsesOver(done, () => hold.signal(1));
  if (writes && (failure === undefined || finals.length > 0)) {
    state.version++;
    state.host.version = state.version;
    state.host.ready = done;
    state.dataLoss =
      failure === undefined
        ? undefined
        : new KeelError(
            ErrorCode.DATA_LOSS,
            `${what}: ${state.describe()} was partly rewritten: the stream stopped at chunk ${finals.length} of ${count}`,
            { cause: failure },
          );
  }
  if (failure !== undefined) throw failure;
  return done;
}
