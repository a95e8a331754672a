/**
 * The WebGPU device's submitted operations awaiting the GPU, in submission order (a growable ring of
 * records, no allocation once warm). After a batch is submitted, `arm` asks for one
 * `onSubmittedWorkDone`; when it resolves, every operation pushed before the request completes (in
 * order, through the scheduler's `complete`). `stop` empties the ring when the device is lost or
 * destroyed; requests still pending then only report that they settled.
 */
import type { QueueOp } from './queue-op';

export class InflightRing {
  #ops: (QueueOp | undefined)[] = new Array<QueueOp | undefined>(64).fill(undefined);
  #head = 0;
  #count = 0;
  /** Operations pushed since the last request. */
  #fresh = 0;
  /** Per pending request, in order: how many operations its done-callback completes. */
  readonly #watermarks: number[] = [];
  #stopped = false;
  readonly #queue: GPUQueue;
  readonly #complete: (op: QueueOp) => void;
  readonly #settled: () => void;
  readonly #onDone = (): void => this.#done();

  /**
   * `complete(op)`: its GPU work is done. `settled()`: a request settled after `stop` (the scheduler
   * checks whether anything is left pending).
   */
  constructor(queue: GPUQueue, complete: (op: QueueOp) => void, settled: () => void) {
    this.#queue = queue;
    this.#complete = complete;
    this.#settled = settled;
  }

  /** Operations in flight. */
  get count(): number {
    return this.#count;
  }

  /** `onSubmittedWorkDone` requests not settled yet. */
  get requests(): number {
    return this.#watermarks.length;
  }

  /** Adds a submitted operation (call `arm` after the batch's pushes). */
  push(op: QueueOp): void {
    const ops = this.#ops;
    if (this.#count === ops.length) {
      const grown = new Array<QueueOp | undefined>(ops.length * 2).fill(undefined);
      for (let i = 0; i < this.#count; i++) grown[i] = ops[(this.#head + i) % ops.length];
      this.#ops = grown;
      this.#head = 0;
    }
    this.#ops[(this.#head + this.#count) % this.#ops.length] = op;
    this.#count++;
    this.#fresh++;
  }

  /** Requests the completion of everything pushed so far (once per batch: after its submit). */
  arm(): void {
    if (this.#stopped || this.#fresh === 0) return;
    this.#watermarks.push(this.#fresh);
    this.#fresh = 0;
    this.#queue.onSubmittedWorkDone().then(this.#onDone, this.#onDone);
  }

  #done(): void {
    let n = this.#watermarks.shift();
    if (n === undefined || this.#stopped) {
      this.#settled();
      return;
    }
    // onSubmittedWorkDone requests resolve in order: this one completes the `n` oldest operations.
    // `complete` may submit more (a callback on a signal queues work): `push` may then grow the ring,
    // so the array is read afresh for each operation.
    for (; n > 0 && this.#count > 0; n--) {
      const ops = this.#ops;
      const op = ops[this.#head] as QueueOp;
      ops[this.#head] = undefined;
      this.#head = (this.#head + 1) % ops.length;
      this.#count--;
      this.#complete(op);
    }
  }

  /** Empties the ring for good (device lost or destroyed), calling `visit` on each operation. */
  stop(visit: (op: QueueOp) => void): void {
    this.#stopped = true;
    const ops = this.#ops;
    for (let i = 0; i < this.#count; i++) visit(ops[(this.#head + i) % ops.length] as QueueOp);
    ops.fill(undefined);
    this.#count = 0;
  }
}
