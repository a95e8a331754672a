/**
 * A short reading of a trace of training steps (what `trainMlp({ traceSteps })` and `keel demo --trace`
 * record): per kernel, how many dispatches per step and their mean time (µs, from the dispatch events:
 * GPU timestamps on WebGPU where the adapter has timestamp-query); per step (one traced execute), the
 * span from its first dispatch's start to its last dispatch's end and the busy time inside it; and the
 * gap between consecutive steps: the next step's first dispatch start minus this step's last dispatch
 * end (the time the device idles between steps). Pure functions over the Chrome trace JSON.
 */
import type { ChromeTrace } from '@keel/hal';

export interface KernelTime {
  readonly name: string;
  /** Dispatches per step. */
  readonly perStep: number;
  readonly meanUs: number;
  /** Time per step in this kernel, µs. */
  readonly usPerStep: number;
}

export interface StepTraceSummary {
  readonly timing: string;
  /** Steps (traced executes with dispatches). */
  readonly steps: number;
  readonly kernels: readonly KernelTime[];
  /** Per step: first dispatch start to last dispatch end, µs. */
  readonly spanUs: readonly number[];
  /** Per step: the summed dispatch time, µs. */
  readonly busyUs: readonly number[];
  /** Between consecutive steps: next first start − this last end, µs. */
  readonly gapUs: readonly number[];
}

function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function summarizeStepTrace(trace: ChromeTrace): StepTraceSummary {
  const dispatches = trace.traceEvents.filter((e) => e.cat === 'dispatch');
  const byStep = new Map<number, typeof dispatches>();
  for (const d of dispatches) {
    const execute = Number(d.args?.execute ?? 0);
    const list = byStep.get(execute) ?? [];
    list.push(d);
    byStep.set(execute, list);
  }
  const steps = [...byStep.keys()].sort((a, b) => a - b).map((k) => byStep.get(k)!);
  const spanUs: number[] = [];
  const busyUs: number[] = [];
  const gapUs: number[] = [];
  let previousEnd: number | undefined;
  for (const step of steps) {
    const start = Math.min(...step.map((d) => d.ts));
    const end = Math.max(...step.map((d) => d.ts + d.dur));
    spanUs.push(end - start);
    busyUs.push(step.reduce((n, d) => n + d.dur, 0));
    if (previousEnd !== undefined) gapUs.push(start - previousEnd);
    previousEnd = end;
  }
  const names = new Map<string, number[]>();
  for (const d of dispatches) {
    const list = names.get(d.name) ?? [];
    list.push(d.dur);
    names.set(d.name, list);
  }
  const n = Math.max(1, steps.length);
  const kernels = [...names]
    .map(([name, durs]) => {
      const total = durs.reduce((a, b) => a + b, 0);
      return { name, perStep: durs.length / n, meanUs: total / durs.length, usPerStep: total / n };
    })
    .sort((a, b) => b.usPerStep - a.usPerStep);
  return {
    timing: String(trace.otherData.dispatchTiming ?? 'unknown'),
    steps: steps.length,
    kernels,
    spanUs,
    busyUs,
    gapUs,
  };
}

/** The summary as a few lines for a log. */
export function formatStepTraceSummary(s: StepTraceSummary): string[] {
  const f = (us: number): string => (Number.isFinite(us) ? us.toFixed(1) : 'n/a');
  return [
    `${s.steps} steps traced, dispatch times from ${s.timing}`,
    ...s.kernels.map(
      (k) =>
        `  ${k.name.padEnd(24)} ${k.perStep.toFixed(1)}×/step  mean ${f(k.meanUs)} µs  ${f(k.usPerStep)} µs/step`,
    ),
    `  step span (first dispatch start → last end): median ${f(median(s.spanUs))} µs; busy ${f(median(s.busyUs))} µs`,
    `  gap between steps (last dispatch end → next first start): median ${f(median(s.gapUs))} µs, max ${f(s.gapUs.length > 0 ? Math.max(...s.gapUs) : Number.NaN)} µs`,
  ];
}
