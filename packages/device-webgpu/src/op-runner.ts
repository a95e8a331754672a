/**
 * How the WebGPU device runs a queue operation once the scheduler (op-scheduler.ts) lets it: encodes it
 * into the open submission batch's command encoder (replay plans, fills, copies, updates, staged
 * writes, reads into readback staging, the indirect-count validation record), and submits a batch
 * with one `queue.submit` when the scheduler flushes it (and earlier, in the middle of the batch, when
 * its writes' staging regions would pass the cap: see #encodeWrite); copies a mapped read out; gives
 * readback staging buffers back. `encode` throws a KeelError to fail the operation (the scheduler then fails its
 * signal); `touched` then says whether the operation had already encoded commands into the batch
 * (replay plans check their bindings before encoding anything, so a failure leaves the batch clean but
 * for unforeseen errors). Host bytes whose ArrayBuffer was detached (or shrunk) since the call fail
 * with FAILED_PRECONDITION instead of moving zeros. Nothing is allocated per operation but what WebGPU
 * itself allocates.
 */
import { ErrorCode, KeelError } from '@keel/fence';
import { describeBuffer } from '@keel/hal';
import { type FrontMethod, traceNow } from '@keel/hal/driver';
import type { GpuEncoding } from './gpu-encoding';
import type { ErrorScopes } from './gpu-errors';
import { alignUp, type GpuMemory } from './gpu-memory';
import type { GpuProfiler } from './gpu-profiler';
import type { GpuScratch } from './gpu-scratch';
import { INDIRECT_RECORD_BYTES, type IndirectValidator } from './indirect-validator';
import type { OpRunner } from './op-scheduler';
import { OpKind, type QueueOp } from './queue-op';
import { ReadbackPool } from './readback-pool';
import type { PlanContext, ReplayPlan } from './replay-plan';
import type { TransferEncoder } from './transfer-encoder';
import type { UniformRing } from './uniform-ring';
import type { WebGpuBuffer } from './webgpu-buffer';
import { WRITE_CHUNK, type WriteStaging } from './write-staging';

/** What the runner works with (the device's parts). */
export interface GpuOpRunnerParts {
  readonly gpu: GPUDevice;
  /** "webgpu device '…' queueRead" and so on, built once (the queue front's names). */
  readonly names: Readonly<Record<FrontMethod, string>>;
  readonly encoding: GpuEncoding;
  readonly ring: UniformRing;
  readonly scratch: GpuScratch;
  readonly transfer: TransferEncoder;
  readonly readback: ReadbackPool;
  readonly uploads: WriteStaging;
  readonly indirect: IndirectValidator;
  readonly context: PlanContext;
  /** Per-dispatch times of traced executes. */
  readonly profiler: GpuProfiler;
  readonly scopes: ErrorScopes;
}

export class GpuOpRunner implements OpRunner {
  readonly #gpu: GPUDevice;
  readonly #names: GpuOpRunnerParts['names'];
  readonly #encoding: GpuEncoding;
  readonly #ring: UniformRing;
  readonly #scratch: GpuScratch;
  readonly #transfer: TransferEncoder;
  readonly #readback: ReadbackPool;
  readonly #uploads: WriteStaging;
  readonly #indirect: IndirectValidator;
  readonly #context: PlanContext;
  readonly #profiler: GpuProfiler;
  readonly #scopes: ErrorScopes;
  /** The array `queue.submit` gets (reused: no allocation per submission). */
  readonly #submitList: GPUCommandBuffer[] = [];
  #submissions = 0;
  /** Set by the device once it is lost or destroyed: staging buffers are then destroyed, not kept. */
  gone = false;

  constructor(parts: GpuOpRunnerParts) {
    this.#gpu = parts.gpu;
    this.#names = parts.names;
    this.#encoding = parts.encoding;
    this.#ring = parts.ring;
    this.#scratch = parts.scratch;
    this.#transfer = parts.transfer;
    this.#readback = parts.readback;
    this.#uploads = parts.uploads;
    this.#indirect = parts.indirect;
    this.#context = parts.context;
    this.#profiler = parts.profiler;
    this.#scopes = parts.scopes;
  }

  /** `queue.submit` calls so far. */
  get submissions(): number {
    return this.#submissions;
  }

  /** The memory of `op`'s `buffer`; FAILED_PRECONDITION when it has none yet. */
  #memoryOf(buffer: WebGpuBuffer, op: QueueOp): GpuMemory {
    if (buffer.gpuFailure !== undefined) throw buffer.gpuFailure;
    const memory = buffer.memory;
    if (memory === undefined) {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `${this.#names[op.method as FrontMethod]}: ${describeBuffer(buffer)} has no memory yet; order the operation after its queueAlloca's signal`,
      );
    }
    return memory;
  }

  /** Opens a submission batch (a command encoder). */
  begin(): void {
    this.#encoding.begin();
  }

  /** True when the operation being encoded (since `encode` began) added commands to the batch. */
  get touched(): boolean {
    return this.#encoding.touched;
  }

  /**
   * Encodes `op` into the open batch (called by the scheduler once its waits allow). On a throw the
   * batch stays open; `touched` says whether `op` left commands in it.
   */
  encode(op: QueueOp): void {
    const encoding = this.#encoding;
    encoding.mark();
    try {
      switch (op.kind) {
        case OpKind.EXECUTE: {
          const plans = op.plans;
          const tables = op.tables;
          const trace = op.trace;
          // Every plan checks its bindings before any plan encodes (a failure leaves nothing behind).
          for (let i = 1; i < plans.length; i++)
            (plans[i] as ReplayPlan).check(this.#context, tables?.[i] ?? undefined);
          if (trace?.dispatches) {
            this.#profiler.begin(op, trace);
            this.#context.profiling = this.#profiler;
          }
          try {
            for (let i = 0; i < plans.length; i++)
              (plans[i] as ReplayPlan).encode(this.#context, tables?.[i] ?? undefined);
          } finally {
            this.#context.profiling = undefined;
          }
          if (op.profile !== undefined) this.#profiler.end(encoding.encoder);
          if (this.#indirect.used) {
            // The indirect counts' validation record, checked when the submission completes.
            const size = ReadbackPool.sizeFor(INDIRECT_RECORD_BYTES);
            const staging = this.#readback.acquire(size);
            op.staging = staging;
            op.stagingSize = size;
            op.stagingOffset = 0;
            this.#indirect.finish(encoding.encoder, staging);
          }
          break;
        }
        case OpKind.FILL: {
          const target = op.target as WebGpuBuffer;
          const memory = this.#memoryOf(target, op);
          this.#transfer.fill(memory, target.base + op.targetOffset, op.length, op.pattern, op.patternLength);
          break;
        }
        case OpKind.COPY: {
          const source = op.source as WebGpuBuffer;
          const target = op.target as WebGpuBuffer;
          const s = this.#memoryOf(source, op);
          const t = this.#memoryOf(target, op);
          this.#transfer.copy(s, source.base + op.sourceOffset, t, target.base + op.targetOffset, op.length);
          break;
        }
        case OpKind.UPDATE: {
          // queue.writeBuffer runs ahead of every encoder: the scheduler flushed the batch before.
          const target = op.target as WebGpuBuffer;
          const memory = this.#memoryOf(target, op);
          this.#transfer.write(op.bytes as Uint8Array, memory, target.base + op.targetOffset);
          break;
        }
        case OpKind.WRITE: {
          this.#checkHost(op, 'ran');
          const target = op.target as WebGpuBuffer;
          const memory = this.#memoryOf(target, op);
          this.#encodeWrite(op, memory, target.base + op.targetOffset);
          break;
        }
        case OpKind.READ: {
          this.#checkHost(op, 'ran');
          const source = op.source as WebGpuBuffer;
          const memory = this.#memoryOf(source, op);
          const at = source.base + op.sourceOffset;
          const start = at & ~3;
          const bytes = alignUp(at + op.length, 4) - start;
          const size = ReadbackPool.sizeFor(bytes);
          const staging = this.#readback.acquire(size);
          op.staging = staging;
          op.stagingSize = size;
          op.stagingOffset = at - start;
          if (bytes > 0) encoding.encoder.copyBufferToBuffer(memory.buffer, start, staging, 0, bytes);
          break;
        }
      }
    } catch (error) {
      if (op.profile !== undefined) this.#profiler.abandon(op);
      this.#context.profiling = undefined;
      this.#indirect.abandon();
      throw error;
    }
  }

  /**
   * Submits the open batch (one `queue.submit`; none when nothing was encoded). The ring's spans are
   * uploaded right before it. Throws when WebGPU throws (the batch is then abandoned).
   */
  submit(): void {
    const encoding = this.#encoding;
    if (!encoding.used) {
      this.abandon();
      return;
    }
    // The batch's span pushed its scopes already; an early submit of a write (#encodeWrite) pushes the
    // scopes of the operation's span here.
    this.#scopes.enter();
    try {
      this.#ring.flush();
      const list = this.#submitList;
      list[0] = encoding.finish();
      this.#gpu.queue.submit(list);
      list.length = 0;
      this.#submissions++;
    } catch (error) {
      this.#submitList.length = 0;
      this.abandon();
      throw error;
    }
    this.#ring.submitted();
    this.#scratch.submitted();
    this.#uploads.submitted();
  }

  /** Drops the open batch's encoder (nothing of it is submitted). */
  abandon(): void {
    this.#encoding.abandon();
    this.#indirect.abandon();
    this.#ring.submitted();
    this.#scratch.submitted();
    this.#uploads.submitted();
  }

  /** A traced execute's batch was submitted: its timestamps are mapped (gpu-profiler.ts). */
  profileSubmitted(op: QueueOp): void {
    this.#profiler.submitted(op);
  }

  /**
   * Encodes a queueWrite: in chunks of at most WRITE_CHUNK bytes, each put with `queue.writeBuffer`
   * into a region of the device's staging buffer reserved for this batch (write-staging.ts), then
   * copied to the target in command order. When the batch's regions would pass the staging cap, the
   * commands encoded so far are submitted (inside the batch's error scopes, so the operation still
   * belongs to one batch) and a new encoder continues the batch with regions from 0: queue order puts
   * that submit's copies before any later `writeBuffer` into the same regions.
   */
  #encodeWrite(op: QueueOp, memory: GpuMemory, at: number): void {
    const bytes = op.bytes as Uint8Array;
    const total = bytes.byteLength;
    const staging = this.#uploads;
    let done = 0;
    while (done < total) {
      const n = Math.min(total - done, WRITE_CHUNK);
      let region = staging.reserve(n);
      if (region < 0) {
        this.submit();
        this.begin();
        region = staging.reserve(n);
      }
      staging.put(region, bytes, done, n);
      this.#transfer.copyStaged(staging.buffer, region, memory, at + done, n);
      done += n;
    }
  }

  /**
   * FAILED_PRECONDITION when the host bytes of a write (source) or read (target) lost their length
   * since the call: their ArrayBuffer was detached (transferred, e.g. posted to a worker) or shrunk.
   * Writing would copy zeros; reading would drop the bytes.
   */
  #checkHost(op: QueueOp, when: 'ran' | 'completed'): void {
    const bytes = op.bytes as Uint8Array;
    if (bytes.byteLength === op.length) return;
    const read = op.kind === OpKind.READ;
    throw new KeelError(
      ErrorCode.FAILED_PRECONDITION,
      `${this.#names[read ? 'queueRead' : 'queueWrite']}: the host ${read ? 'target' : 'source'} was detached (transferred) or shrunk before the ${read ? 'read' : 'write'} ${when}: it has ${bytes.byteLength} bytes, the operation needs ${op.length}; keep its ArrayBuffer until the operation's signal`,
    );
  }

  /** A traced operation completed (or failed with `error`): its dispatch estimates and its event. */
  traceDone(op: QueueOp, error: unknown): void {
    const trace = op.trace;
    if (trace === undefined) return;
    if (op.profile !== undefined) this.#profiler.completed(op, traceNow());
    trace.opDone(op, error);
  }

  finishRead(op: QueueOp): void {
    const staging = op.staging as GPUBuffer;
    if (op.kind === OpKind.EXECUTE) {
      const record = new Uint32Array(staging.getMappedRange(0, INDIRECT_RECORD_BYTES));
      const failure = this.#indirect.check(record, this.#names.queueExecute);
      if (failure !== undefined) throw failure;
      return;
    }
    this.#checkHost(op, 'completed');
    const mapped = new Uint8Array(staging.getMappedRange(0, op.stagingSize), op.stagingOffset, op.length);
    (op.bytes as Uint8Array).set(mapped);
  }

  /** A write's batch failed on the GPU: the write staging buffer is replaced (write-staging.ts `discard`). */
  writeFailed(): void {
    this.#uploads.discard();
  }

  releaseStaging(op: QueueOp, discard = false): void {
    const staging = op.staging;
    if (staging === undefined) return;
    op.staging = undefined;
    this.#readback.release(staging, op.stagingSize, this.gone || discard);
  }
}
