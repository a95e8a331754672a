/**
 * The record of one queue operation while it waits, runs and completes: the driver kit's QueueRecord
 * (hal/driver) plus WebGPU's staging state and the submission batch whose error scopes it awaits
 * (submit-batch.ts), and what each kind may do on GPU order (`runsOnGpuOrder`, `signalsOnGpuOrder`). Records are pooled by the
 * scheduler (op-scheduler.ts), and their callbacks are bound once per record, so the hot path
 * (an operation whose waits are ready) allocates no record and no closure.
 */
import type { KeelError } from '@keel/fence';
import type { BindingTable } from '@keel/hal';
import { OpKind, QueueRecord, snapshotBindingTable } from '@keel/hal/driver';
import type { SubmissionProfile } from './gpu-profiler';
import type { ReplayPlan } from './replay-plan';
import type { SubmitBatch } from './submit-batch';
import type { WebGpuBuffer } from './webgpu-buffer';

export { OpKind };

/** Operations that may be submitted on GPU-ordered waits (they only add GPU work; op-scheduler.ts). */
export function runsOnGpuOrder(kind: number): boolean {
  return kind !== OpKind.HOST_CALL && kind !== OpKind.BARRIER;
}

/** Operations whose signals become GPU-ordered once submitted (their effects are GPU work only). */
export function signalsOnGpuOrder(kind: number): boolean {
  return kind !== OpKind.HOST_CALL && kind !== OpKind.READ && kind !== OpKind.BARRIER;
}

/** What an operation does once its batch's error scopes are popped (an enum: esbuild inlines it). */
export enum AfterScopes {
  NOTHING,
  /** Its GPU work is done but scopes were pending: complete it. */
  COMPLETE,
  /** It failed (after its batch was submitted) while scopes were pending: recycle it. */
  RECYCLE,
}

export class QueueOp extends QueueRecord<WebGpuBuffer> {
  /** Submitted while some wait timepoint was only GPU-ordered (not reached): checked at completion. */
  early = false;
  /** Waiting in the deferred set. */
  deferred = false;
  readonly plans: ReplayPlan[] = [];
  /** queueRead: the staging buffer being mapped, its size, and the copied range's offset in it. */
  staging: GPUBuffer | undefined;
  stagingSize = 0;
  stagingOffset = 0;
  /** queueRead: its staging buffer's `mapAsync` has not settled yet. */
  mapping = false;
  /** queueRead: why its map failed, kept while the scheduler finds out whether the device was lost. */
  mapError: unknown = undefined;
  /**
   * The submission batch it was encoded into, while that batch's error scopes are not popped yet (it
   * completes and is recycled only after).
   */
  batch: SubmitBatch | undefined;
  /** What to do once its batch's scopes are popped. */
  afterScopes = AfterScopes.NOTHING;
  /** The first error its batch's error scopes caught, and how many operations that batch held. */
  gpuError: GPUError | undefined;
  batchSize = 0;
  /** A traced execute's dispatches (gpu-profiler.ts), from its encoding to its completion. */
  profile: SubmissionProfile | undefined;

  // Bound once per record by the scheduler that creates it (op-scheduler.ts; declared only: no
  // class-field definitions to emit besides). The waits were reached (or failed); the waits of an
  // operation that ran early were reached after its GPU work was done; the staging buffer's map
  // settled; a failed map's loss check settled; the host call runs; the host call's promise settled.
  declare onWaitReached: (error?: KeelError) => void;
  declare onSettled: (error?: KeelError) => void;
  declare onMapped: () => void;
  declare onMapFailed: (error: unknown) => void;
  declare onLossChecked: () => void;
  declare runHostCall: () => void;
  declare onHostCallDone: () => void;
  declare onHostCallFailed: (error: unknown) => void;

  /** Drops every reference so a pooled record keeps nothing alive (RecordPool.release calls it). */
  override reset(): void {
    this.resetRecord();
    this.early = false;
    this.deferred = false;
    this.plans.length = 0;
    this.staging = undefined;
    this.mapping = false;
    this.mapError = undefined;
    this.batch = undefined;
    this.afterScopes = AfterScopes.NOTHING;
    this.gpuError = undefined;
    this.batchSize = 0;
    this.profile = undefined;
  }
}

/**
 * The deferral hook of an update (OpScheduler.issue's `prepareDefer`): a deferred update keeps a copy of
 * its bytes, taken at the call.
 */
export function keepUpdateBytes(op: QueueOp): void {
  op.bytes = (op.bytes as Uint8Array).slice();
}

/**
 * The deferral hook of an execute: it keeps copies of the caller's arrays and of the table entries each
 * plan uses, taken at the call (the caller may reuse or change them; the execution uses the tables it
 * was checked with). O(slots used): a table for slot 2^30 is a sparse array of length 2^30 + 1.
 */
export function keepExecuteArrays(op: QueueOp): void {
  op.commandBuffers = op.commandBuffers.slice();
  const tables = op.tables;
  if (tables === undefined) return;
  const kept: (BindingTable | undefined)[] = [];
  for (let i = 0; i < tables.length; i++) {
    const t = tables[i];
    const plan = op.plans[i];
    kept.push(
      t === undefined || t === null || plan === undefined
        ? undefined
        : snapshotBindingTable(t, plan.data.slots),
    );
  }
  op.tables = kept;
}
