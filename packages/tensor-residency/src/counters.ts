/**
 * Transfer and residency counters. Each ResidencyManager keeps one set for its device; a transfer is
 * counted once, by the manager that issues it:
 * - host → device uploads (`queueWrite`, or `queueCopy` from pinned staging memory) by the target's
 *   manager, device → host readbacks (`queueRead`, or `queueCopy` into pinned memory) by the source's;
 * - a move between two devices goes through the host: one readback (source manager) plus one upload
 *   (target manager), and the target counts one `crossDeviceMoves`; a move between two managers of
 *   the same device is one `queueCopy` counted in `deviceToDeviceBytes` by the target manager.
 * Byte counts are the bytes each operation moves: a tensor's `storageBytes` (its byte length rounded
 * up to a multiple of 4), or a chunk's length when streaming.
 */

/** A snapshot of one manager's counters (or the sum of several, see `sumCounters`). */
export interface ResidencyCounters {
  /** Bytes uploaded host → device. */
  readonly hostToDeviceBytes: number;
  /** Bytes read back device → host (including write-backs of evicted dirty copies). */
  readonly deviceToHostBytes: number;
  /** Bytes copied directly between two copies on one device (queueCopy). */
  readonly deviceToDeviceBytes: number;
  /** Transfer operations issued (each queueWrite, queueRead or queueCopy of tensor data is one). */
  readonly transfers: number;
  /**
   * Accesses that needed no transfer: an acquire or a stream that found its copy up to date, and
   * write-only accesses that skipped the upload because every byte will be overwritten.
   */
  readonly transfersAvoided: number;
  /** Moves of a tensor from another device's copy to this one, through the host. */
  readonly crossDeviceMoves: number;
  /**
   * Bytes the host copied between JavaScript memory and device memory (queueWrite/queueRead payloads,
   * the copies a staging upload implies). Transfers from or to pinned host tensors add nothing here.
   */
  readonly hostCopyBytes: number;
  /** Bytes moved by queueCopy between pinned host memory and the device (no host copy). */
  readonly pinnedTransferBytes: number;
  /** Copies evicted to make room (budget) or on request (`evict`). */
  readonly evictions: number;
  /** Evicted copies that were the only up-to-date copy and were written back to the host first. */
  readonly writebacks: number;
  /** Chunks processed by `stream`. */
  readonly streamedChunks: number;
  /** Bytes of device copies this manager holds now (at most `budgetBytes`). */
  readonly residentBytes: number;
  /** Highest `residentBytes` seen. */
  readonly peakResidentBytes: number;
  /** The budget. */
  readonly budgetBytes: number;
}

/** The mutable counters a manager updates (internal). */
export class CounterSet {
  hostToDeviceBytes = 0;
  deviceToHostBytes = 0;
  deviceToDeviceBytes = 0;
  transfers = 0;
  transfersAvoided = 0;
  crossDeviceMoves = 0;
  hostCopyBytes = 0;
  pinnedTransferBytes = 0;
  evictions = 0;
  writebacks = 0;
  streamedChunks = 0;
  residentBytes = 0;
  peakResidentBytes = 0;

  constructor(readonly budgetBytes: number) {}

  /** Adds `bytes` to the resident bytes and updates the peak. */
  addResident(bytes: number): void {
    this.residentBytes += bytes;
    if (this.residentBytes > this.peakResidentBytes) this.peakResidentBytes = this.residentBytes;
  }

  snapshot(): ResidencyCounters {
    return {
      hostToDeviceBytes: this.hostToDeviceBytes,
      deviceToHostBytes: this.deviceToHostBytes,
      deviceToDeviceBytes: this.deviceToDeviceBytes,
      transfers: this.transfers,
      transfersAvoided: this.transfersAvoided,
      crossDeviceMoves: this.crossDeviceMoves,
      hostCopyBytes: this.hostCopyBytes,
      pinnedTransferBytes: this.pinnedTransferBytes,
      evictions: this.evictions,
      writebacks: this.writebacks,
      streamedChunks: this.streamedChunks,
      residentBytes: this.residentBytes,
      peakResidentBytes: this.peakResidentBytes,
      budgetBytes: this.budgetBytes,
    };
  }
}

/** Field-wise sum of several snapshots (peaks are summed too: an upper bound of the joint peak). */
export function sumCounters(...counters: readonly ResidencyCounters[]): ResidencyCounters {
  const total: Record<string, number> = {};
  for (const c of counters) {
    for (const [key, value] of Object.entries(c)) total[key] = (total[key] ?? 0) + (value as number);
  }
  const zero = new CounterSet(0).snapshot();
  return { ...zero, ...total } as ResidencyCounters;
}

/** Total bytes moved in any direction: host→device + device→host + device→device. */
export function movedBytes(counters: ResidencyCounters): number {
  return counters.hostToDeviceBytes + counters.deviceToHostBytes + counters.deviceToDeviceBytes;
}
