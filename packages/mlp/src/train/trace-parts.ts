/**
 * The trace of a run's last steps (`traceSteps`) when a device was lost inside the traced window: each
 * device of the run records its own part (the lost one until it failed, its replacement from the step
 * the run resumed at), and the parts merge into one Chrome trace event JSON: one `pid` per device (the
 * recorders' own, made distinct if they are not), times on one clock (ts 0 = the first part's start),
 * `otherData.devices` the number of parts and `otherData.processes` what each pid was.
 *
 * Promises: a run without a recovery in the window gets its one trace unchanged; events are sorted by
 * start; nothing here touches a device.
 */
import type { ChromeTrace, Device, Trace, TraceEvent, TraceOptions } from '@keel/hal';

/** One device's part of a run's trace. */
export interface TracePart {
  readonly chrome: ChromeTrace;
  /** Epoch ms just before the part's `startTrace` (its ts 0, within microseconds). */
  readonly startedMs: number;
  /** What the device was in the run, e.g. "cpu (lost after step 5)". */
  readonly role: string;
}

/** A trace recording on one device of the run. */
export interface ActiveTrace {
  readonly trace: Trace;
  readonly startedMs: number;
  readonly deviceName: string;
  /** The first step (from 1) submitted while it records. */
  readonly fromStep: number;
}

/**
 * Starts a trace on `device` right before step `fromStep` (from 1) is submitted; undefined when the
 * device cannot trace.
 */
export function startTracePart(
  device: Device,
  options: TraceOptions | undefined,
  fromStep: number,
): ActiveTrace | undefined {
  const startedMs = performance.timeOrigin + performance.now();
  const trace = device.startTrace?.(options);
  return trace === undefined ? undefined : { trace, startedMs, deviceName: device.info.name, fromStep };
}

/** Stops `active` on a lost device and keeps what it recorded (what has arrived: the device is gone). */
export function lostTracePart(active: ActiveTrace, lostAfterStep: number): TracePart {
  active.trace.stop();
  return {
    chrome: active.trace.toJSON(),
    startedMs: active.startedMs,
    role: `${active.deviceName}: from step ${active.fromStep}, lost after step ${lostAfterStep}`,
  };
}

/** The finished trace of the run's last device, with every step up to `lastStep` (from 1). */
export async function finalTracePart(active: ActiveTrace, lastStep: number): Promise<TracePart> {
  active.trace.stop();
  return {
    chrome: await active.trace.toChromeTrace(),
    startedMs: active.startedMs,
    role: `${active.deviceName}: steps ${active.fromStep}-${lastStep}`,
  };
}

const round3 = (us: number): number => Math.round(us * 1000) / 1000;

/** The parts as one trace (the single part unchanged). */
export function mergeTraceParts(parts: readonly TracePart[]): ChromeTrace | undefined {
  const first = parts[0];
  if (first === undefined) return undefined;
  if (parts.length === 1) return first.chrome;
  const events: TraceEvent[] = [];
  const tracks: Record<string, string> = {};
  const processes: Record<string, string> = {};
  const used = new Set<number>();
  let dropped = 0;
  for (const part of parts) {
    const shiftUs = (part.startedMs - first.startedMs) * 1000;
    const pids = new Map<number, number>();
    for (const e of part.chrome.traceEvents) {
      let pid = pids.get(e.pid);
      if (pid === undefined) {
        pid = e.pid;
        while (used.has(pid)) pid++;
        used.add(pid);
        pids.set(e.pid, pid);
        processes[String(pid)] = part.role;
      }
      events.push({ ...e, pid, ts: round3(e.ts + shiftUs) });
    }
    const other = part.chrome.otherData;
    if (typeof other.dropped === 'number') dropped += other.dropped;
    if (typeof other.tracks === 'object') Object.assign(tracks, other.tracks);
  }
  events.sort((a, b) => a.ts - b.ts || b.dur - a.dur);
  return {
    traceEvents: events,
    displayTimeUnit: 'ms',
    otherData: {
      ...first.chrome.otherData,
      device: parts.map((p) => p.role).join(' → '),
      dropped,
      tracks,
      devices: parts.length,
      processes,
    },
  };
}
