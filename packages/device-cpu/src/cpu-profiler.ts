/**
 * Per-dispatch wall time on the CPU device, for traces (hal Trace, `device.startTrace()`).
 *
 * Each queue gets a profile ring while a trace with dispatches records: per executor (worker w in task
 * mode, the main thread's one executor in sync mode) a region of CAPACITY entries of ENTRY_STRIDE
 * float64 [seq, plan, command, worker, start ms, end ms], plus one int32 count of entries written per
 * executor. The executor that runs a dispatch's workgroups writes one entry per dispatch it took part
 * in: `start` before its first workgroup, `end` after each (before the item is counted finished, so
 * the completion of the operation publishes it). Times are `performance.timeOrigin + performance.now()`,
 * the clock every thread shares. In task mode the memory is a SharedArrayBuffer posted to the workers
 * ('profile' message, ordered with the executes); sync mode uses plain ArrayBuffers.
 *
 * At an execute's completion the main thread reads the entries of that operation (`collect`, by its
 * seq) and hands the recorder one event per dispatch (earliest start to latest end over the
 * executors, named by the export) and one per executor share (the worker tracks, which show idle time).
 *
 * One reader per queue, made with its ring and kept for the device's life, so that its read cursor
 * goes on across traces: an execute of a stopped trace that completes while the next trace records
 * still finds its entries. The reader also switches the executors' writing on (`resume`, when a trace
 * with dispatches starts) and off (`pause`): the run loop pauses a queue only once no trace with
 * dispatches records and no execute of one is pending on it, so an execute called while a trace
 * recorded is timed even when it runs after `stop()`.
 */
import type { TraceRecorder } from '@keel/hal/driver';
import { newMemory } from './byte-ops';
import type { Operation } from './operation';
import { CMD_STRIDE, Field, Opcode } from './plan-format';

/** float64 per entry: [seq, plan, command, worker, start, end]. */
const ENTRY_STRIDE = 6;
/** Entries per executor before the ring wraps. */
const PROFILE_CAPACITY = 4096;

/** One queue's profile memory. */
export interface ProfileRing {
  /** executors × PROFILE_CAPACITY × ENTRY_STRIDE float64. */
  readonly data: Float64Array;
  /** Entries written, per executor (Atomics). */
  readonly counts: Int32Array;
}

export function createProfileRing(executors: number, shared: boolean): ProfileRing {
  return {
    data: new Float64Array(newMemory(executors * PROFILE_CAPACITY * ENTRY_STRIDE * 8, shared)),
    counts: new Int32Array(newMemory(Math.max(1, executors) * 4, shared)),
  };
}

/** The clock every thread stamps entries with (epoch ms, as hal's traceNow). */
export function profileNow(): number {
  return performance.timeOrigin + performance.now();
}

/**
 * Opens executor `worker`'s next entry for command `command` of plan `plan` of operation `seq`
 * (start = end = now) and publishes it; returns its float64 index (the caller updates the end).
 */
export function openProfileEntry(
  ring: ProfileRing,
  worker: number,
  seq: number,
  plan: number,
  command: number,
): number {
  const n = Atomics.load(ring.counts, worker);
  const at = (worker * PROFILE_CAPACITY + (n % PROFILE_CAPACITY)) * ENTRY_STRIDE;
  const data = ring.data;
  data[at] = seq;
  data[at + 1] = plan;
  data[at + 2] = command;
  data[at + 3] = worker;
  const now = profileNow();
  data[at + 4] = now;
  data[at + 5] = now;
  Atomics.store(ring.counts, worker, n + 1);
  return at;
}

/** Names a kernel for the trace: its export name and its executable's label. */
export type KernelNamer = (executable: number, entry: number) => { name: string; executable: string };

/** One dispatch's events: its kernel, earliest start, latest end and the executors that ran it. */
interface Span {
  name: string;
  executable: string;
  workgroups: number;
  start: number;
  end: number;
  workers: number;
}

/** The main thread's side of one queue's ring: its reader, and the switch of the executors' writing. */
export class ProfileReader {
  /** Entries consumed, per executor (from those written when reading started). */
  readonly #read: Int32Array;
  readonly #ring: ProfileRing;
  /** Hands the queue's executors the ring (start writing) or nothing (stop). */
  readonly #setRing: (ring: ProfileRing | undefined) => void;
  #writing = false;

  constructor(ring: ProfileRing, executors: number, setRing: (ring: ProfileRing | undefined) => void) {
    this.#ring = ring;
    this.#setRing = setRing;
    // Aligned int32 reads of shared memory are tear-free (the counts may be stale, as with Atomics.load).
    this.#read = ring.counts.slice(0, executors);
  }

  /** Whether the executors write the ring (from their next dispatch on). */
  get writing(): boolean {
    return this.#writing;
  }

  /** The executors write the ring from their next dispatch (nothing changes when they already do). */
  resume(): void {
    if (this.#writing) return;
    this.#writing = true;
    this.#setRing(this.#ring);
  }

  /** The executors stop writing the ring from their next dispatch. */
  pause(): void {
    if (!this.#writing) return;
    this.#writing = false;
    this.#setRing(undefined);
  }

  /**
   * Emits the dispatch events of execute `op` (the entries of its seq on its queue's executors; none
   * when it never reached them) into `trace`, on queue `op.queue`'s tracks.
   */
  collect(op: Operation, trace: TraceRecorder, namer: KernelNamer): void {
    const plans = op.plans;
    const seq = op.seq;
    if (op.planCount === 0 || seq < 0) return;
    const { data, counts } = this.#ring;
    // Per (plan, command): the kernel, earliest start, latest end, executors; per entry, its share.
    const spans = new Map<number, Span>();
    const shares: [span: Span, worker: number, start: number, end: number][] = [];
    for (let w = 0; w < this.#read.length; w++) {
      const written = Atomics.load(counts, w);
      let at = Math.max(this.#read[w]!, written - PROFILE_CAPACITY);
      for (; at < written; at++) {
        const o = (w * PROFILE_CAPACITY + (at % PROFILE_CAPACITY)) * ENTRY_STRIDE;
        const entrySeq = data[o]!;
        if (entrySeq > seq) break; // a later operation's entry: read it at its completion
        if (entrySeq < seq) continue; // an operation no trace reads (untraced, or traced without dispatches)
        const plan = data[o + 1]!;
        const command = data[o + 2]!;
        const start = data[o + 4]!;
        const end = data[o + 5]!;
        const key = plan * 1_000_000 + command;
        let span = spans.get(key);
        if (!span) {
          const commands = plans[plan]?.arrays.commands;
          if (!commands) continue;
          const base = command * CMD_STRIDE;
          span = {
            ...namer(commands[base + Field.EXECUTABLE]!, commands[base + Field.ENTRY]!),
            workgroups:
              commands[base + Field.OP] === Opcode.DISPATCH
                ? commands[base + Field.X]! * commands[base + Field.Y]! * commands[base + Field.Z]!
                : -1,
            start,
            end,
            workers: 0,
          };
          spans.set(key, span);
        }
        span.start = Math.min(span.start, start);
        span.end = Math.max(span.end, end);
        span.workers++;
        shares.push([span, data[o + 3]!, start, end]);
      }
      this.#read[w] = at;
    }
    const queue = op.queue;
    const execute = trace.nextExecute();
    for (const s of spans.values()) {
      trace.dispatch(queue, s.name, s.start, s.end, {
        executable: s.executable,
        workgroups: s.workgroups,
        executors: s.workers,
        execute,
        timing: 'cpu-wall',
      });
    }
    for (const [s, worker, start, end] of shares) {
      trace.worker(queue, worker, s.name, start, end, { executable: s.executable, execute, queue, worker });
    }
  }
}
