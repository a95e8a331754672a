/**
 * The summary `keel demo --devices` prints after a data-parallel run: ms/step and loss, each device's
 * shard and speed, the bytes the reduction moved per step against the minimum, and where the scheduler
 * placed the last step's operations (and why).
 */
import { formatBytes } from '../train/format-summary';
import type { TrainDataParallelResult } from './data-parallel-options';

/** The last step's placements as lines: `read   on cpu:0 compute  (producer)`. */
export function formatPlacement(result: TrainDataParallelResult): string[] {
  const { trace, targets, operationsPerStep } = result.placement;
  return trace
    .slice(-operationsPerStep)
    .map((p) => `  ${p.op.padEnd(9)} on ${targets[p.target]!.padEnd(18)} (${p.reason})`);
}

export function formatDataParallelSummary(result: TrainDataParallelResult): string {
  const r = result;
  const t = r.transfers;
  const lines = [
    `ms/step (median after ${r.warmup} warm-up): ${r.msPerStep.toFixed(2)}   final loss ${r.losses[r.steps - 1]!.toFixed(4)}`,
    `devices (${r.balance} shards${r.balance === 'measured' ? `, ${r.rebalances} re-balance(s)` : ''}):`,
    ...r.devices.map(
      (d) =>
        `  ${d.label.padEnd(10)} ${d.name}: ${d.rows} of ${r.config.batch} rows, gradients ${
          d.pinned ? 'pinned (read in place)' : 'read to host'
        }${
          d.rowsPerMs > 0 ? `, ${d.rowsPerMs.toFixed(1)} rows/ms` : ''
        }, ${d.recordings} recording(s), ${d.dispatchesPerStep} dispatches/step`,
    ),
    `replicas identical after the run: ${r.replicasIdentical ? 'yes' : 'NO'}`,
    `reduction per step: ${formatBytes(t.reductionBytesPerStep)} moved (gradients to host, weights back) vs ${formatBytes(
      t.minimumBytesPerStep,
    )} minimum (${formatBytes(t.gradientBytesPerDevice)} of gradients per device, each way): ×${(
      t.reductionBytesPerStep / t.minimumBytesPerStep
    ).toFixed(4)}`,
    `batches to devices: ${formatBytes(t.batchesToDevice)}; replicas: ${formatBytes(t.initialWeightsToDevice)} up once, ${formatBytes(
      t.finalWeightsToHost,
    )} back once`,
    `scheduler: ${r.placement.stats.submitted} operations, by reason ${Object.entries(
      r.placement.stats.byReason,
    )
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}; on a producer's queue ${(100 * r.placement.stats.locality.share).toFixed(0)}%`,
    'placement of the last step:',
    ...formatPlacement(r),
  ];
  return lines.join('\n');
}
