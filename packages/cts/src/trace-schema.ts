/**
 * The shape every exported trace must have (hal Trace, DESIGN.md § Profiling and traces), checked by
 * the conformance suite and by the tests of `keel demo --trace`: `{ traceEvents: [...] }` whose every
 * event is a Chrome complete event (`ph: 'X'`) with a string `name` and `cat`, finite numbers `ts`,
 * `dur` ≥ 0, integer `pid` and `tid`, and `args` (when present) an object of strings, numbers and
 * booleans. Returns the problems found (empty when the trace is well formed), so callers can report
 * every one at once.
 *
 * Tracks (hal README § Traces): every `tid` decodes to one track of one queue q < 32, and the track
 * matches the event: queue q's operations `q` (cat 'queue'), its dispatches `10000 + q` ('dispatch'),
 * its waits `30000 + q` ('wait'), worker w < 1000 of queue q `100000 + 1000·q + w` ('worker'), lane
 * l < 9 of any of them `+ 1000000·l`; an event's `args.queue` (and a worker event's `args.worker`) is
 * the one its tid names, and `otherData.tracks` names the tid after its track. So two tracks that
 * share a tid show as a problem.
 */

/** One event as it appears in the JSON (after JSON.parse). */
export interface ParsedTraceEvent {
  readonly name: string;
  readonly cat: string;
  readonly ph: string;
  readonly ts: number;
  readonly dur: number;
  readonly pid: number;
  readonly tid: number;
  readonly args?: Record<string, unknown>;
}

/** The problems of `trace` as Chrome trace event JSON (empty: well formed). */
export function chromeTraceProblems(trace: unknown): string[] {
  const problems: string[] = [];
  if (trace === null || typeof trace !== 'object' || Array.isArray(trace)) {
    return ['the trace is not an object'];
  }
  const events = (trace as { traceEvents?: unknown }).traceEvents;
  if (!Array.isArray(events)) return ['traceEvents is not an array'];
  const otherData = (trace as { otherData?: unknown }).otherData;
  const tracks =
    otherData !== null && typeof otherData === 'object'
      ? ((otherData as { tracks?: unknown }).tracks as Record<string, unknown> | undefined)
      : undefined;
  if (tracks === undefined || tracks === null || typeof tracks !== 'object') {
    problems.push('otherData.tracks is not an object');
  }
  events.forEach((event: unknown, i) => {
    const where = `traceEvents[${i}]`;
    if (event === null || typeof event !== 'object') {
      problems.push(`${where} is not an object`);
      return;
    }
    const e = event as Record<string, unknown>;
    if (typeof e.name !== 'string' || e.name === '') problems.push(`${where}.name is not a non-empty string`);
    if (typeof e.cat !== 'string') problems.push(`${where}.cat is not a string`);
    if (e.ph !== 'X') problems.push(`${where}.ph is not 'X'`);
    for (const key of ['ts', 'dur', 'pid', 'tid']) {
      const v = e[key];
      if (typeof v !== 'number' || !Number.isFinite(v))
        problems.push(`${where}.${key} is not a finite number`);
    }
    if (typeof e.dur === 'number' && e.dur < 0) problems.push(`${where}.dur is negative`);
    if (typeof e.ts === 'number' && e.ts < 0) problems.push(`${where}.ts is negative`);
    for (const key of ['pid', 'tid']) {
      if (typeof e[key] === 'number' && !Number.isInteger(e[key]))
        problems.push(`${where}.${key} is not an integer`);
    }
    for (const problem of trackProblems(e, tracks)) problems.push(`${where}: ${problem}`);
    if (e.args !== undefined) {
      if (e.args === null || typeof e.args !== 'object') problems.push(`${where}.args is not an object`);
      else {
        for (const [k, v] of Object.entries(e.args)) {
          const ok =
            typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
          if (!ok) problems.push(`${where}.args.${k} is not a string, boolean or finite number`);
        }
      }
    }
  });
  return problems;
}

/** The events of a parsed trace of category `cat` (e.g. 'dispatch', 'queue'). */
export function traceEventsOf(trace: unknown, cat: string): ParsedTraceEvent[] {
  const events = (trace as { traceEvents?: ParsedTraceEvent[] }).traceEvents ?? [];
  return events.filter((e) => e.cat === cat);
}

/** A track as its tid names it (hal README § Traces). */
interface DecodedTrack {
  readonly cat: 'queue' | 'dispatch' | 'wait' | 'worker';
  readonly queue: number;
  readonly worker: number;
  readonly lane: number;
  /** `otherData.tracks`' name of the track without the lane suffix (dispatches: its prefix). */
  readonly name: string;
}

function decodeTid(tid: number): DecodedTrack | undefined {
  if (!Number.isInteger(tid) || tid < 0) return undefined;
  const lane = Math.floor(tid / 1_000_000);
  const base = tid % 1_000_000;
  if (lane >= 9) return undefined;
  if (base >= 100_000) {
    const queue = Math.floor((base - 100_000) / 1000);
    const worker = base % 1000;
    return { cat: 'worker', queue, worker, lane, name: `queue ${queue} worker ${worker}` };
  }
  if (base >= 30_000)
    return { cat: 'wait', queue: base - 30_000, worker: -1, lane, name: `queue ${base - 30_000} waits` };
  if (base >= 10_000) {
    return {
      cat: 'dispatch',
      queue: base - 10_000,
      worker: -1,
      lane,
      name: `queue ${base - 10_000} dispatches`,
    };
  }
  return { cat: 'queue', queue: base, worker: -1, lane, name: `queue ${base}` };
}

/** The problems of event `e`'s tid against its category, its args and the track names. */
function trackProblems(e: Record<string, unknown>, tracks: Record<string, unknown> | undefined): string[] {
  if (typeof e.tid !== 'number') return [];
  const track = decodeTid(e.tid);
  if (track === undefined || track.queue >= 32) return [`tid ${e.tid} is no track of the documented layout`];
  const problems: string[] = [];
  if (e.cat !== track.cat)
    problems.push(`tid ${e.tid} is a ${track.cat} track, the event's cat is '${e.cat}'`);
  const args = e.args as Record<string, unknown> | undefined;
  if (typeof args?.queue === 'number' && args.queue !== track.queue) {
    problems.push(`tid ${e.tid} is queue ${track.queue}'s, args.queue is ${args.queue}`);
  }
  if (track.cat === 'worker' && typeof args?.worker === 'number' && args.worker !== track.worker) {
    problems.push(`tid ${e.tid} is worker ${track.worker}'s, args.worker is ${args.worker}`);
  }
  if (tracks !== undefined && tracks !== null && typeof tracks === 'object') {
    const named = tracks[String(e.tid)];
    const suffix = track.lane === 0 ? '' : ` (lane ${track.lane + 1})`;
    const ok =
      typeof named === 'string' &&
      named.startsWith(track.name) &&
      named.endsWith(suffix) &&
      (track.lane > 0 || !/ \(lane \d+\)$/.test(named)) &&
      (track.cat === 'dispatch' || named === `${track.name}${suffix}`);
    if (!ok)
      problems.push(`otherData.tracks[${e.tid}] is ${JSON.stringify(named)}, not '${track.name}${suffix}'`);
  }
  return problems;
}
