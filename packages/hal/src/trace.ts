/**
 * Traces (DESIGN.md § Profiling and traces): what `Device.startTrace` returns and what it exports. A
 * trace records, while it is active, every queue operation of the device (from the moment its waits
 * were reached to its completion, with the time it waited and the bytes it moved), the waits, and the
 * time of every dispatch (GPU timestamps from `timestamp-query` on WebGPU where the adapter has it,
 * wall time measured by the executing thread on the CPU device). It exports Chrome trace event JSON
 * (`{ "traceEvents": [...] }`) that Perfetto (ui.perfetto.dev) and `chrome://tracing` open.
 *
 * Every exported event is a complete event: `ph: 'X'`, `ts` and `dur` in microseconds (finite,
 * `dur` ≥ 0, `ts` relative to the moment the trace started), `pid` the device (the same for every
 * trace of it), `tid` the track: queue q's operations on `tid` q, its dispatches on `tid` 10000 + q,
 * CPU worker w of queue q on 100000 + 1000 × q + w, the time operations of queue q waited for their
 * wait fences (from the call to the moment they could start) on 30000 + q; events that overlap on one
 * track spill into extra lanes (`tid` + 1000000 × lane, at most 9 lanes); no two tracks share a tid
 * (the driver kit's `TRACK_*` constants).
 * `cat` says what an event is ('queue', 'wait', 'dispatch', 'worker'); a dispatch's `args.execute`
 * numbers the traced execute it belongs to (1, 2, … in submission order per queue) and `args.timing` says where a
 * dispatch time comes from ('gpu-timestamp', 'cpu-wall', or 'host-estimate' when the adapter has no
 * timestamp-query: the submission's host-observed time split evenly over its dispatches).
 *
 * Off by default; a device that is not tracing pays one branch on a field per operation and
 * allocates nothing for tracing.
 */

/** Options of `Device.startTrace` (unknown keys, wrong types and ranges are INVALID_ARGUMENT). */
export interface TraceOptions {
  /** Record per-dispatch times (default true). */
  readonly dispatches?: boolean;
  /**
   * WebGPU: time dispatches with `timestamp-query` when the device has the feature (default true).
   * False, or a device without it, gives host-side estimates (`args.timing: 'host-estimate'`).
   */
  readonly gpuTimestamps?: boolean;
  /** Most events kept (default 1 000 000); later ones are counted in `dropped`, not kept. */
  readonly maxEvents?: number;
  /** Names the trace's process in the export (default: the device's `info.name`). */
  readonly label?: string;
}

/** One Chrome trace event (a complete event: `ph: 'X'`). */
export interface TraceEvent {
  /** The operation's Device method ('queueExecute', …), 'wait', or the dispatch's export name. */
  readonly name: string;
  /** 'queue', 'wait', 'dispatch' or 'worker'. */
  readonly cat: string;
  /** Always 'X' (a complete event: a start and a duration). */
  readonly ph: 'X';
  /** Start, µs since the trace started. */
  readonly ts: number;
  /** Duration, µs (≥ 0). */
  readonly dur: number;
  /** The device (one per device that recorded the trace). */
  readonly pid: number;
  /** The track (see the file comment: queue, dispatches, workers, waits, lanes). */
  readonly tid: number;
  /** Details: bytes, wait_us, executable, execute, timing, error, … */
  readonly args?: Readonly<Record<string, string | number | boolean>>;
}

/** The exported trace: Chrome trace event JSON, as `JSON.stringify` writes it for Perfetto. */
export interface ChromeTrace {
  /** The events, sorted by start. */
  readonly traceEvents: TraceEvent[];
  /** How viewers show times (the events are in µs either way). */
  readonly displayTimeUnit: 'ms';
  /** Device, backend, timing source and the track names (tid → name). */
  readonly otherData: Readonly<Record<string, string | number | boolean | Readonly<Record<string, string>>>>;
}

/**
 * A trace being recorded (or stopped). `[Symbol.dispose]()` stops it, so `using trace =
 * device.startTrace()` records a block. One trace at a time per device: starting another while one
 * records is FAILED_PRECONDITION.
 */
export interface Trace extends Disposable {
  /** True until `stop()` (or dispose). */
  readonly recording: boolean;
  /** Events recorded so far (dispatch times still being read back from the GPU are not counted yet). */
  readonly eventCount: number;
  /** Events not kept because `maxEvents` was reached. */
  readonly dropped: number;
  /**
   * Where dispatch times come from: 'gpu-timestamp', 'cpu-wall', 'host-estimate', or 'none' when
   * the trace records no dispatches.
   */
  readonly dispatchTiming: 'gpu-timestamp' | 'cpu-wall' | 'host-estimate' | 'none';
  /** Stops recording (idempotent). Operations already submitted still report their completion. */
  stop(): void;
  /** Stops recording: `using trace = device.startTrace()` records until the end of the block. */
  [Symbol.dispose](): void;
  /**
   * The Chrome trace event JSON object of everything recorded. Waits until the dispatch times of
   * operations that completed are read back (GPU timestamps map asynchronously); never rejects.
   */
  toChromeTrace(): Promise<ChromeTrace>;
  /**
   * The same export, synchronously, of what has arrived so far (GPU timestamps still being read back
   * are missing): what `JSON.stringify(trace)` writes.
   */
  toJSON(): ChromeTrace;
}
