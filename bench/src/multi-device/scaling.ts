/**
 * Data-parallel scaling of the reference MLP step (`trainMlpDataParallel`): the same global batch
 * trained on device lists side by side, in interleaved rounds (round r runs every list once, in an order
 * that rotates per round), the median ms/step of each list over the rounds. Shared by the
 * `multi-device` suite (CPU devices here) and the GPU machine's entry (gpu-multi-entry.ts).
 */

import type { Device } from '@keel/hal';
import { type TrainDataParallelResult, trainMlpDataParallel } from '@keel/mlp';
import { type Metrics, median, metric } from '../harness.ts';

export interface ScalingOptions {
  /**
   * Device lists by metric name (`1_device`: 'cpu', `2_devices`: 'cpu:2', ...), or a function that opens
   * the devices of one run (destroyed after it). The first is the baseline.
   */
  readonly lists: Readonly<Record<string, string | DeviceOpener>>;
  readonly rounds: number;
  readonly steps: number;
  readonly warmup: number;
  readonly batch?: number;
  /** CPU devices: worker threads per queue of each (equal per-device resources). */
  readonly workers?: number;
  readonly cpuKernelUrl?: URL;
  readonly log: (line: string) => void;
}

/** Opens the devices of one run (the caller's devices: destroyed by measureScaling after the run). */
export interface DeviceOpener {
  readonly describe: string;
  open(): Promise<readonly Device[]>;
}

export interface ScalingResult {
  readonly metrics: Metrics;
  /** The last run of each list (for its transfers and placement). */
  readonly last: Record<string, TrainDataParallelResult>;
  /** Lists that failed, with the reason. */
  readonly failed: Record<string, string>;
}

/** Runs every list `rounds` times interleaved; metrics per list and relative to the first. */
export async function measureScaling(options: ScalingOptions): Promise<ScalingResult> {
  const names = Object.keys(options.lists);
  const samples = new Map<string, number[]>(names.map((n) => [n, []]));
  const last: Record<string, TrainDataParallelResult> = {};
  const failed: Record<string, string> = {};
  for (let round = 0; round < options.rounds; round++) {
    const order = names.map((_, i) => names[(i + round) % names.length]!);
    for (const name of order) {
      if (failed[name] !== undefined) continue;
      const list = options.lists[name]!;
      const devices = typeof list === 'string' ? list : list.describe;
      let opened: readonly Device[] = [];
      try {
        if (typeof list !== 'string') opened = await list.open();
        const r = await trainMlpDataParallel({
          devices: typeof list === 'string' ? list : opened,
          steps: options.steps + options.warmup,
          warmup: options.warmup,
          pregeneratedBatches: 8,
          ...(options.batch === undefined ? {} : { batch: options.batch }),
          ...(options.workers === undefined ? {} : { workers: options.workers }),
          ...(options.cpuKernelUrl === undefined ? {} : { cpuKernelUrl: options.cpuKernelUrl }),
        });
        samples.get(name)!.push(r.msPerStep);
        last[name] = r;
        options.log(
          `round ${round + 1}: ${name} (${devices}) ${r.msPerStep.toFixed(3)} ms/step, shards ${r.devices.map((d) => d.rows).join('/')}`,
        );
      } catch (error) {
        failed[name] = error instanceof Error ? error.message : String(error);
        options.log(`${name} (${devices}) failed: ${failed[name]}`);
      } finally {
        for (const d of opened) await d.destroy().catch(() => {});
      }
    }
  }
  const metrics: Metrics = {};
  const base = names[0]!;
  const baseMs = median(samples.get(base)!);
  for (const name of names) {
    const ms = samples.get(name)!;
    if (ms.length === 0) continue;
    const r = last[name]!;
    const n = r.devices.length;
    const stepMs = median(ms);
    metrics[`step_ms_${name}`] = metric(stepMs, 'ms');
    if (name !== base && Number.isFinite(baseMs)) {
      const speedup = baseMs / stepMs;
      metrics[`speedup_${name}`] = metric(speedup, 'x');
      metrics[`scaling_efficiency_${name}`] = metric(speedup / n, 'fraction');
    }
    metrics[`bytes_moved_per_step_${name}`] = metric(r.transfers.reductionBytesPerStep, 'bytes');
    metrics[`min_bytes_per_step_${name}`] = metric(r.transfers.minimumBytesPerStep, 'bytes');
    metrics[`bytes_vs_minimum_${name}`] = metric(
      r.transfers.reductionBytesPerStep / r.transfers.minimumBytesPerStep,
      'x',
    );
    metrics[`replicas_identical_${name}`] = metric(r.replicasIdentical ? 1 : 0, 'bool');
    if (name !== base && last[base] !== undefined) {
      let worst = 0;
      const a = r.losses;
      const b = last[base]!.losses;
      for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
      metrics[`loss_max_abs_diff_${name}`] = metric(worst, 'loss');
    }
  }
  const any = Object.values(last)[0];
  if (any !== undefined)
    metrics.gradient_bytes_per_device = metric(any.transfers.gradientBytesPerDevice, 'bytes');
  return { metrics, last, failed };
}
