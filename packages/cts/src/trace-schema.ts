/**
 * The shape every exported trace must have (hal Trace, DESIGN.md § Profiling and traces), checked by
 * the conformance suite and by the tests of `keel demo --trace`: `{ traceEvents: [...] }` whose every
 * event is a Chrome complete event (`ph: 'X'`) with a string `name` and `cat`, finite numbers `ts`,
 * `dur` ≥ 0, integer `pid` and `tid`, and `args` (when present) an object of strings, numbers and
 * booleans. Returns the problems found (empty when the trace is well formed), so callers can report
 * every one at once.
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
