/**
 * The benchmark harness: every suite measures with these helpers so that figures are medians of
 * repeated samples, and comparisons (A vs B) are interleaved within one run.
 */
import os from 'node:os';

export interface Metric {
  readonly value: number;
  readonly unit: string;
}
export type Metrics = Record<string, Metric>;

export interface MachineInfo {
  readonly cpus: string;
  readonly node: string;
  adapter?: string;
}

export interface SuiteResult {
  readonly suite: string;
  readonly machine: MachineInfo;
  readonly metrics: Metrics;
}

/** A suite: measures and returns its metrics; `log` writes human-readable progress to stderr. */
export interface Suite {
  readonly name: string;
  readonly description: string;
  run(context: SuiteContext): Promise<Metrics>;
}

export interface SuiteContext {
  readonly machine: MachineInfo;
  log(line: string): void;
}

export function machineInfo(): MachineInfo {
  const cpus = os.cpus();
  return { cpus: `${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown'}`, node: process.version };
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export interface SampleOptions {
  /** Samples taken (the median is reported). */
  readonly samples?: number;
  /** Calls per sample; the sample's time is divided by it. */
  readonly inner?: number;
  /** Untimed samples first, to warm caches and the JIT. */
  readonly warmup?: number;
}

/** Median time in milliseconds of one call of `fn`. */
export async function sampleMs(
  fn: () => void | Promise<void>,
  { samples = 15, inner = 1, warmup = 3 }: SampleOptions = {},
): Promise<number> {
  const times: number[] = [];
  for (let s = 0; s < warmup + samples; s++) {
    const start = performance.now();
    for (let i = 0; i < inner; i++) await fn();
    const elapsed = (performance.now() - start) / inner;
    if (s >= warmup) times.push(elapsed);
  }
  return median(times);
}

/** Synchronous variant of sampleMs, for code whose per-call cost is too small to await. */
export function sampleSyncMs(
  fn: () => void,
  { samples = 15, inner = 1, warmup = 3 }: SampleOptions = {},
): number {
  const times: number[] = [];
  for (let s = 0; s < warmup + samples; s++) {
    const start = performance.now();
    for (let i = 0; i < inner; i++) fn();
    const elapsed = (performance.now() - start) / inner;
    if (s >= warmup) times.push(elapsed);
  }
  return median(times);
}

/**
 * Measures several variants interleaved (A, B, A, B, ...) so that drift in machine load affects all of
 * them alike; returns the median milliseconds per call of each.
 */
export async function interleavedMs<K extends string>(
  variants: Record<K, () => void | Promise<void>>,
  { samples = 15, inner = 1, warmup = 3 }: SampleOptions = {},
): Promise<Record<K, number>> {
  const keys = Object.keys(variants) as K[];
  const times = new Map<K, number[]>(keys.map((k) => [k, []]));
  for (let s = 0; s < warmup + samples; s++) {
    for (const key of keys) {
      const fn = variants[key];
      const start = performance.now();
      for (let i = 0; i < inner; i++) await fn();
      const elapsed = (performance.now() - start) / inner;
      if (s >= warmup) times.get(key)!.push(elapsed);
    }
  }
  const result = {} as Record<K, number>;
  for (const key of keys) result[key] = median(times.get(key)!);
  return result;
}

export function metric(value: number, unit: string): Metric {
  return { value: Number.isFinite(value) ? Number(value.toPrecision(6)) : value, unit };
}
