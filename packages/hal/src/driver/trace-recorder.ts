/**
 * The trace recorder of the driver kit: what `Device.startTrace` returns (hal's `Trace`), shared by
 * every device so that the Chrome trace event format, the tracks and the lane layout are defined once.
 *
 * Devices feed it:
 * - queue operations through their QueueRecord: the queue front stamps `record.trace` and
 *   `record.traceEnqueued` when a trace records (`stamp`), the device sets `traceStarted` when the
 *   operation's waits are reached and calls `opDone` at completion;
 * - fence-completed operations (queueAlloca/queueDealloca) through `fenceOp`;
 * - dispatch times: `dispatch` (host clock, CPU wall time or host estimates), `worker` (one CPU worker's
 *   share of a dispatch), `gpuDispatch` (raw GPU timestamps, aligned to the host clock at export);
 * - asynchronous readbacks through `track`, which `toChromeTrace` awaits.
 *
 * Times are milliseconds on the epoch clock `performance.timeOrigin + performance.now()`, the same in
 * every thread (workers measure with it too); the export converts them to µs since the trace started.
 * Recording allocates (one object per event); a device that is not tracing never reaches this file.
 */
import { describeValue, ErrorCode, type Fence, KeelError } from '@keel/fence';
import type { DeviceInfo } from '../device';
import type { OptionRules } from '../options';
import type { ChromeTrace, Trace, TraceEvent, TraceOptions } from '../trace';
import { OP_NAMES, OpKind, type QueueRecord } from './queue-record';

/**
 * Track ids (`tid`), disjoint for every queue q < 32 (hal's QueueAffinity holds 32 queues), worker
 * w < TRACK_WORKERS_PER_QUEUE and lane < 9: queue q's operations `q`, its dispatches `10000 + q`, its
 * waits `30000 + q`, worker w of queue q `100000 + 1000·q + w`; lane l of any of them adds
 * `1000000·l`. Queue q's operations: `TRACK_QUEUE + q`.
 */
export const TRACK_QUEUE = 0;
/** Queue q's dispatches: `TRACK_DISPATCH + q`. */
export const TRACK_DISPATCH = 10000;
/** Queue q's waits: `TRACK_WAIT + q`. */
export const TRACK_WAIT = 30000;
/** Worker w of queue q: `TRACK_WORKER + TRACK_WORKERS_PER_QUEUE·q + w`. */
export const TRACK_WORKER = 100000;
/** Worker tracks per queue (a device's worker index must stay below it). */
export const TRACK_WORKERS_PER_QUEUE = 1000;
/** Overlapping events of one track spill into lanes: `tid + Lane.STRIDE × lane` (lane < Lane.MAX). */
enum Lane {
  STRIDE = 1_000_000,
  MAX = 9,
}

/** Where a trace's dispatch times come from (`Trace.dispatchTiming`). */
export type DispatchTiming = Trace['dispatchTiming'];

/** startTrace's option rules (hal checkOptions). */
export const TRACE_OPTION_RULES: OptionRules = {
  dispatches: { type: 'boolean' },
  gpuTimestamps: { type: 'boolean' },
  maxEvents: { type: 'integer', min: 1, max: 100_000_000 },
  label: { type: 'string' },
};

/** Milliseconds on the clock every thread shares (epoch based, sub-ms precision). */
export function traceNow(): number {
  return performance.timeOrigin + performance.now();
}

type Args = Record<string, string | number | boolean>;

interface RawEvent {
  name: string;
  cat: string;
  tid: number;
  /** Epoch ms. */
  start: number;
  end: number;
  args: Args | undefined;
}

interface GpuEvent {
  name: string;
  queue: number;
  /** ns since the recorder's GPU base (as Numbers). */
  begin: number;
  end: number;
  /** Host ms when the submission was made (aligns the GPU clock). */
  submitted: number;
  args: Args | undefined;
}

let nextPid = 1;

/** A new process id for trace exports: a device takes one at its first trace and keeps it. */
export function newTracePid(): number {
  return nextPid++;
}

export class TraceRecorder implements Trace {
  // Declared, assigned in the constructor (the build then emits no field definition besides).
  /** Epoch ms when the trace started (ts 0 of the export). */
  declare readonly originMs: number;
  declare readonly dispatchTiming: DispatchTiming;
  /** The export's `pid`: the device's (every trace of one device has it; traces of several merge). */
  declare readonly pid: number;
  /** Events kept at most (the `maxEvents` option). */
  declare readonly maxEvents: number;
  /** Per-dispatch times are wanted (the `dispatches` option). */
  declare readonly dispatches: boolean;
  dropped = 0;
  #recording = true;
  readonly #events: RawEvent[] = [];
  readonly #gpu: GpuEvent[] = [];
  #gpuBase: bigint | undefined;
  readonly #pending = new Set<Promise<unknown>>();
  #executes = 0;
  readonly #label: string;
  readonly #info: DeviceInfo;
  readonly #onStop: (recorder: TraceRecorder) => void;

  constructor(
    info: DeviceInfo,
    options: TraceOptions,
    dispatchTiming: DispatchTiming,
    pid: number,
    onStop: (recorder: TraceRecorder) => void,
  ) {
    this.originMs = traceNow();
    this.#info = info;
    this.#label = options.label ?? info.name;
    this.dispatches = options.dispatches !== false;
    this.dispatchTiming = this.dispatches ? dispatchTiming : 'none';
    this.maxEvents = options.maxEvents ?? 1_000_000;
    this.pid = pid;
    this.#onStop = onStop;
  }

  get recording(): boolean {
    return this.#recording;
  }

  get eventCount(): number {
    return this.#events.length + this.#gpu.length;
  }

  stop(): void {
    if (!this.#recording) return;
    this.#recording = false;
    this.#onStop(this);
  }

  /** Stops recording (`using trace = device.startTrace()`). */
  [Symbol.dispose](): void {
    this.stop();
  }

  #room(): boolean {
    if (this.#events.length + this.#gpu.length < this.maxEvents) return true;
    this.dropped++;
    return false;
  }

  /** Adds one event on track `tid` (times in epoch ms). */
  add(name: string, cat: string, tid: number, start: number, end: number, args?: Args): void {
    if (!this.#room()) return;
    this.#events.push({ name, cat, tid, start, end: Math.max(start, end), args });
  }

  /** Marks `record` as traced by this recorder (called by the queue front when it is filled). */
  stamp(record: QueueRecord): void {
    record.trace = this;
    record.traceEnqueued = traceNow();
    record.traceStarted = 0;
  }

  /**
   * `record` completed (or failed with `error`): its wait (enqueue → start) and its run (start → now)
   * on its queue's track, with the bytes it moved and what it executed.
   */
  opDone(record: QueueRecord, error?: unknown): void {
    const end = traceNow();
    const method = OP_NAMES[record.kind] ?? 'operation';
    const enqueued = record.traceEnqueued === 0 ? end : record.traceEnqueued;
    const started = record.traceStarted === 0 ? end : record.traceStarted;
    const tid = TRACK_QUEUE + record.queue;
    const args: Args = { queue: record.queue, wait_us: round((started - enqueued) * 1000) };
    if (record.kind === OpKind.EXECUTE) {
      const buffers = record.commandBuffers;
      args.commandBuffers = buffers.length;
      if (buffers.length > 0) args.label = buffers.map((b) => b?.label ?? 'command buffer').join(', ');
    } else if (record.kind !== OpKind.BARRIER && record.kind !== OpKind.HOST_CALL) {
      args.bytes = record.length;
    }
    if (error !== undefined) {
      args.error = KeelError.is(error) ? `${error.code}: ${error.message}` : describeValue(error);
    }
    if (started > enqueued) {
      this.add('wait', 'wait', TRACK_WAIT + record.queue, enqueued, started, { operation: method });
    }
    this.add(method, 'queue', tid, started, end, args);
  }

  /**
   * An operation that completes through its signal fence (queueAlloca, queueDealloca): an event from
   * the call to the moment `signal` is reached (or fails).
   */
  fenceOp(method: string, queue: number, signal: Fence, args: Args): void {
    const start = traceNow();
    signal.onReached((error) => {
      const a = error ? { ...args, error: `${error.code}: ${error.message}` } : args;
      this.add(method, 'queue', TRACK_QUEUE + queue, start, traceNow(), a);
    });
  }

  /**
   * Numbers the traced executes whose dispatches are reported (1, 2, …): devices put it in each
   * dispatch event's `args.execute`, so tools can group a step's dispatches.
   */
  nextExecute(): number {
    return ++this.#executes;
  }

  /** One dispatch's time on queue `queue`'s dispatch track (host clock: CPU wall time or estimates). */
  dispatch(queue: number, name: string, start: number, end: number, args?: Args): void {
    this.add(name, 'dispatch', TRACK_DISPATCH + queue, start, end, args);
  }

  /**
   * One CPU worker's share of a dispatch (its first workgroup's start to its last one's end); `worker`
   * is below TRACK_WORKERS_PER_QUEUE.
   */
  worker(queue: number, worker: number, name: string, start: number, end: number, args?: Args): void {
    this.add(name, 'worker', TRACK_WORKER + TRACK_WORKERS_PER_QUEUE * queue + worker, start, end, args);
  }

  /** One dispatch timed by GPU timestamps (ns, raw), submitted at host time `submitted` (ms). */
  gpuDispatch(queue: number, name: string, begin: bigint, end: bigint, submitted: number, args?: Args): void {
    if (!this.#room()) return;
    this.#gpuBase ??= begin;
    const base = this.#gpuBase;
    const b = Number(begin - base);
    const e = Number(end - base);
    this.#gpu.push({ name, queue, begin: b, end: Math.max(b, e), submitted, args });
  }

  /** A readback the export must wait for (its rejection is ignored: the device reports it). */
  track(promise: Promise<unknown>): void {
    const settled = promise.then(ignore, ignore);
    this.#pending.add(settled);
    void settled.then(() => this.#pending.delete(settled));
  }

  async toChromeTrace(): Promise<ChromeTrace> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
    return this.toJSON();
  }

  toJSON(): ChromeTrace {
    const origin = this.originMs;
    const events: RawEvent[] = this.#events.slice();
    if (this.#gpu.length > 0) {
      // GPU timestamps have their own epoch: shift them so that no dispatch starts before the host
      // submitted it (the smallest shift that satisfies every submission).
      let offset = Infinity;
      for (const g of this.#gpu) offset = Math.min(offset, g.begin / 1e6 - g.submitted);
      for (const g of this.#gpu) {
        events.push({
          name: g.name,
          cat: 'dispatch',
          tid: TRACK_DISPATCH + g.queue,
          start: g.begin / 1e6 - offset,
          end: g.end / 1e6 - offset,
          args: g.args,
        });
      }
    }
    events.sort((a, b) => a.start - b.start || b.end - a.end);
    const laneEnds = new Map<number, number[]>();
    const tracks: Record<string, string> = {};
    const traceEvents: TraceEvent[] = [];
    for (const e of events) {
      let ends = laneEnds.get(e.tid);
      if (!ends) {
        ends = [];
        laneEnds.set(e.tid, ends);
      }
      let lane = 0;
      while (lane < ends.length && lane < Lane.MAX - 1 && ends[lane]! > e.start + 1e-6) lane++;
      ends[lane] = Math.max(ends[lane] ?? 0, e.end);
      const tid = e.tid + Lane.STRIDE * lane;
      tracks[String(tid)] ??= trackName(e.tid, lane, this.dispatchTiming);
      const event: TraceEvent = {
        name: e.name,
        cat: e.cat,
        ph: 'X',
        ts: round(Math.max(0, (e.start - origin) * 1000)),
        dur: round(Math.max(0, (e.end - e.start) * 1000)),
        pid: this.pid,
        tid,
        ...(e.args ? { args: e.args } : {}),
      };
      traceEvents.push(event);
    }
    return {
      traceEvents,
      displayTimeUnit: 'ms',
      otherData: {
        device: this.#label,
        backend: this.#info.backend,
        dispatchTiming: this.dispatchTiming,
        startedAt: new Date(origin).toISOString(),
        dropped: this.dropped,
        tracks,
      },
    };
  }
}

/** FAILED_PRECONDITION for a second trace while one records. */
export function traceBusy(what: string): KeelError {
  return new KeelError(
    ErrorCode.FAILED_PRECONDITION,
    `${what}: a trace is already recording on this device (stop it first: trace.stop() or dispose it)`,
  );
}

function trackName(tid: number, lane: number, timing: DispatchTiming): string {
  const suffix = lane === 0 ? '' : ` (lane ${lane + 1})`;
  if (tid >= TRACK_WORKER) {
    const q = Math.floor((tid - TRACK_WORKER) / TRACK_WORKERS_PER_QUEUE);
    return `queue ${q} worker ${(tid - TRACK_WORKER) % TRACK_WORKERS_PER_QUEUE}${suffix}`;
  }
  if (tid >= TRACK_WAIT) return `queue ${tid - TRACK_WAIT} waits${suffix}`;
  if (tid >= TRACK_DISPATCH) return `queue ${tid - TRACK_DISPATCH} dispatches (${timing})${suffix}`;
  return `queue ${tid - TRACK_QUEUE}${suffix}`;
}

function ignore(): void {}

/** µs with 3 decimals (ns), always finite. */
function round(us: number): number {
  return Number.isFinite(us) ? Math.round(us * 1000) / 1000 : 0;
}
