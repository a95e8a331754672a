/**
 * The training step's queue work: two queues, seven timelines, double-buffered inputs. All ordering
 * comes from fences; the host never waits except for the loss it reports.
 *
 * Queues: COMPUTE (0) runs the arena alloca, the step's execute, the loss read and the dealloca;
 * UPLOAD (1) writes batches. Timelines (semaphores), each advanced by one kind of operation in order:
 *
 * | timeline  | value reached when                  |
 * | --------- | ----------------------------------- |
 * | `upload`  | 2k+2: batch k written (2k+1: its x, when x and labels are written apart) |
 * | `alloc`   | k+1: the arena of step k allocated  |
 * | `exec`    | k+1: step k executed                |
 * | `read[s]` | j+1: the loss of step 3j+s on the host (one timeline per loss slot s) |
 * | `dealloc` | k+1: the arena of step k released   |
 *
 * The loss reads have a timeline per loss slot, not one shared: a read's signal is reached only once
 * its bytes are on the host (a map, a host round trip), so a read that waited for the previous step's
 * read (to keep one timeline in order) could be submitted only after that round trip, behind the steps
 * queued meanwhile, and the host's wait for a loss then waited for the whole queue: the device idled
 * during every turnaround. With a timeline per slot each read waits only for its step's execute (GPU
 * order), so it is submitted right behind it, and its loss arrives while the next steps run.
 *
 * Batches: x and labels of one batch live in one device buffer (x at 0, labels at x's bytes rounded
 * up to the storage alignment); a batch whose x and labels share an ArrayBuffer in that same layout
 * (as `SyntheticDataset.batch` makes them) uploads with ONE queueWrite, any other with two.
 *
 * Step k (input buffer `k mod 2`, loss slot `k mod 3`):
 * - upload of batch k (queue 1) waits `upload ≥ 2k` (uploads stay in order) and `exec ≥ k-1` (step
 *   k-2, the last reader of these input buffers, is done): batch k+1 uploads while step k runs;
 * - alloca (queue 0) waits `exec ≥ k` (and `alloc ≥ k`): the arena of step k-1, deallocated at `exec ≥ k`, is dominated,
 *   so the allocator hands the same block back at once (same-queue reuse, no waiting, no growth);
 * - execute waits the alloca, the batch, `exec ≥ k` (SGD updates the weights in place), `read[k mod 3]
 *   ≥ ⌊k/3⌋` (loss slot `k mod 3` was read back by step k-3: three slots, so the read of a step already
 *   two behind, done long ago, is all a step waits for, and the host may keep two steps queued beyond
 *   the loss it waits for without ever holding up the device), and the parameters' leases of this step
 *   (their upload before step 0; a mirror's device-side snapshot when one was taken after step k-1);
 * - loss read waits `exec ≥ k+1`; dealloca waits `exec ≥ k+1`.
 *
 * Per step the host allocates only what the APIs make per call: immutable Fences, the arena's Buffer
 * and its binding entry. The binding table array, the input and loss bindings and the host loss slots
 * are made once and reused (devices snapshot tables at submission).
 */
import { Fence, type Semaphore, type Timepoint } from '@keel/fence';
import {
  type Binding,
  type BindingTable,
  type Buffer,
  BufferUsage,
  type CommandBuffer,
  type Device,
  QueueAffinity,
} from '@keel/hal';
import type { TensorLeases } from '@keel/tensor-residency';
import type { Batch } from '../dataset';
import type { StepLayout } from './step-layout';

/** The queue that computes. */
export const COMPUTE_QUEUE = QueueAffinity.of(0);
/** The queue that uploads batches. */
export const UPLOAD_QUEUE = QueueAffinity.of(1);
/** Bytes between the loss slots of the loss buffer (an aligned offset on every device). */
const LOSS_STRIDE = 256;
/**
 * Loss slots (triple buffering): step k writes slot `k mod 3`, so up to two steps can be queued
 * behind the one whose loss the host awaits (see `loss`).
 */
export const LOSS_SLOTS = 3;

const at = (semaphore: Semaphore, value: number): Timepoint => ({ semaphore, value });

export class StepPipeline {
  readonly #device: Device;
  readonly #layout: StepLayout;
  readonly #tables: [BindingTable];
  readonly #table: (Binding | undefined)[];
  readonly #commandBuffers: readonly CommandBuffer[];
  readonly #upload: Semaphore;
  readonly #alloc: Semaphore;
  readonly #exec: Semaphore;
  /** One loss-read timeline per loss slot (see the table above). */
  readonly #read: readonly Semaphore[];
  readonly #dealloc: Semaphore;
  readonly #buffers: Buffer[] = [];
  readonly #x: readonly [Binding, Binding];
  readonly #labels: readonly [Binding, Binding];
  /** Byte offset of the labels in an input buffer (and in a packed host batch). */
  readonly #labelsOffset: number;
  readonly #loss: readonly Binding[];
  readonly #lossHost: readonly Float32Array<ArrayBuffer>[];
  #uploaded = 0;
  #submitted = 0;
  /** Bytes written by `uploadBatch` so far. */
  uploadedBytes = 0;
  /** Bytes read by the loss reads so far. */
  readBytes = 0;

  /** Batches uploaded so far (`uploadBatch` calls). */
  get uploads(): number {
    return this.#uploaded;
  }

  constructor(device: Device, layout: StepLayout, commandBuffer: CommandBuffer) {
    this.#device = device;
    this.#layout = layout;
    this.#commandBuffers = [commandBuffer];
    this.#upload = device.createSemaphore(0);
    this.#alloc = device.createSemaphore(0);
    this.#exec = device.createSemaphore(0);
    this.#read = Array.from({ length: LOSS_SLOTS }, () => device.createSemaphore(0));
    this.#dealloc = device.createSemaphore(0);
    const buffer = (byteLength: number, label: string): Buffer => {
      const b = device.createBuffer({ byteLength, usage: BufferUsage.DEFAULT, label });
      this.#buffers.push(b);
      return b;
    };
    const align = Math.max(256, device.info.limits.minStorageBufferOffsetAlignment);
    const labelsOffset = Math.ceil(layout.xBytes / align) * align;
    this.#labelsOffset = labelsOffset;
    const inputs = [0, 1].map((i) => buffer(labelsOffset + layout.labelsBytes, `batch[${i}]`));
    this.#x = [
      { buffer: inputs[0]!, length: layout.xBytes },
      { buffer: inputs[1]!, length: layout.xBytes },
    ];
    this.#labels = [
      { buffer: inputs[0]!, offset: labelsOffset, length: layout.labelsBytes },
      { buffer: inputs[1]!, offset: labelsOffset, length: layout.labelsBytes },
    ];
    const loss = buffer(LOSS_SLOTS * LOSS_STRIDE, 'loss');
    this.#loss = Array.from({ length: LOSS_SLOTS }, (_, i) => ({
      buffer: loss,
      offset: i * LOSS_STRIDE,
      length: 4,
    }));
    this.#lossHost = Array.from({ length: LOSS_SLOTS }, () => new Float32Array(1));
    this.#table = new Array<Binding | undefined>(layout.slotCount).fill(undefined);
    this.#tables = [this.#table];
  }

  /** Steps submitted so far. */
  get submitted(): number {
    return this.#submitted;
  }

  /** The fence reached once the first `steps` steps executed. */
  executed(steps: number): Fence {
    return steps === 0 ? Fence.empty : Fence.of(at(this.#exec, steps));
  }

  /**
   * Enqueues the upload of batch `k` (batches are uploaded in order, k = 0, 1, 2, ...) on the upload
   * queue. `batch` must stay unchanged until the upload is done (it is, once step k ran).
   */
  uploadBatch(k: number, batch: Batch): void {
    if (k !== this.#uploaded) throw new RangeError(`StepPipeline: batch ${k} uploaded out of order`);
    const p = k & 1;
    const wait =
      k === 0
        ? Fence.empty
        : k === 1
          ? Fence.of(at(this.#upload, 2 * k))
          : Fence.of(at(this.#upload, 2 * k), at(this.#exec, k - 1));
    const written = Fence.of(at(this.#upload, 2 * k + 2));
    const d = this.#device;
    const { x, labels } = batch;
    if (labels.buffer === x.buffer && labels.byteOffset === x.byteOffset + this.#labelsOffset) {
      // Packed like the device buffer: one write (padding between x and labels included).
      const length = this.#labelsOffset + labels.byteLength;
      const bytes = new Uint8Array(x.buffer, x.byteOffset, length);
      d.queueWrite(UPLOAD_QUEUE, wait, written, bytes, { buffer: this.#x[p]!.buffer, length });
    } else {
      const xWritten = Fence.of(at(this.#upload, 2 * k + 1));
      d.queueWrite(UPLOAD_QUEUE, wait, xWritten, x, this.#x[p]!);
      d.queueWrite(UPLOAD_QUEUE, xWritten, written, labels, this.#labels[p]!);
    }
    this.uploadedBytes += batch.x.byteLength + batch.labels.byteLength;
    this.#uploaded++;
  }

  /**
   * Enqueues step `k` (steps are submitted in order) on the compute queue; its batch must be uploaded.
   * `params`: this step's read-write leases of the parameters, in `layout.params` order (parameter i
   * binds slot i); the step waits on their fence. The caller releases them with `executed(k + 1)`.
   */
  submitStep(k: number, params: TensorLeases): void {
    if (k !== this.#submitted || k >= this.#uploaded) {
      throw new RangeError(`StepPipeline: step ${k} submitted out of order or before its batch`);
    }
    const p = k & 1;
    const slot = k % LOSS_SLOTS;
    const round = (k - slot) / LOSS_SLOTS;
    const read = this.#read[slot]!;
    const d = this.#device;
    const layout = this.#layout;
    const exec = this.#exec;
    const allocated = Fence.of(at(this.#alloc, k + 1));
    const arena = d.queueAlloca(
      COMPUTE_QUEUE,
      // `alloc ≥ k` is implied by `exec ≥ k`, but the previous arena's death frontier names it when
      // its dealloca was issued before its alloca completed: waiting on both keeps the reuse dominated.
      k === 0 ? Fence.empty : Fence.of(at(exec, k), at(this.#alloc, k)),
      allocated,
      { usage: BufferUsage.DISPATCH_STORAGE, label: 'mlp step arena' },
      layout.arenaBytes,
    );
    const table = this.#table;
    const leases = params.leases;
    for (let i = 0; i < leases.length; i++) table[i] = leases[i]!.ref;
    table[layout.xSlot] = this.#x[p];
    table[layout.labelsSlot] = this.#labels[p];
    table[layout.lossSlot] = this.#loss[slot];
    table[layout.arenaSlot] = { buffer: arena };
    const batchReady = at(this.#upload, 2 * k + 2);
    const wait = Fence.join(
      params.wait,
      k === 0
        ? Fence.of(at(this.#alloc, k + 1), batchReady)
        : k < LOSS_SLOTS
          ? Fence.of(at(this.#alloc, k + 1), batchReady, at(exec, k))
          : Fence.of(at(this.#alloc, k + 1), batchReady, at(exec, k), at(read, round)),
    );
    const done = Fence.of(at(exec, k + 1));
    d.queueExecute(COMPUTE_QUEUE, wait, done, this.#commandBuffers, this.#tables);
    d.queueRead(COMPUTE_QUEUE, done, Fence.of(at(read, round + 1)), this.#loss[slot]!, this.#lossHost[slot]!);
    d.queueDealloca(COMPUTE_QUEUE, done, Fence.of(at(this.#dealloc, k + 1)), arena);
    this.readBytes += 4;
    this.#submitted++;
  }

  /**
   * Resolves with the loss of step `k` once it is on the host (call in step order, before step
   * k + LOSS_SLOTS is submitted).
   */
  async loss(k: number): Promise<number> {
    const slot = k % LOSS_SLOTS;
    await this.#read[slot]!.wait((k - slot) / LOSS_SLOTS + 1);
    return this.#lossHost[slot]![0]!;
  }

  /** Resolves once every submitted step's arena was released and every upload done. */
  async drain(): Promise<void> {
    await Promise.all([
      this.#dealloc.wait(this.#submitted),
      // Slot s was read by the submitted steps s, s+3, ...: ⌈(submitted - s) / 3⌉ of them.
      ...this.#read.map((read, s) => read.wait(Math.max(0, Math.ceil((this.#submitted - s) / LOSS_SLOTS)))),
      this.#upload.wait(2 * this.#uploaded),
    ]);
  }

  /** Destroys the input and loss buffers (work still using them keeps them alive until it completes). */
  destroy(): void {
    for (const b of this.#buffers) if (b.state === 'live') b.destroy();
    this.#buffers.length = 0;
  }
}
