/**
 * The human-readable summary `keel demo` prints after training (from a TrainMlpResult): a pure
 * function of the result, one fact per line. Per-step figures are per batch uploaded (redone steps
 * included), totals per direction include every byte the run moved (checkpoint mirrors too), and the
 * allocator's peaks say when they are the device's rather than the run's (`transient.peaksSince`).
 */
import type { CheckpointReport, TrainMlpResult } from './train-result';

/** "2.71 MB", "800 B": decimal units, three significant digits. */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let value = bytes / 1000;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value.toPrecision(3)} ${units[unit]}`;
}

/** The model in one line: "784-512-512-10, ReLU, softmax cross-entropy, SGD lr 0.05, batch 256". */
export function describeModel(result: Pick<TrainMlpResult, 'config'>): string {
  const c = result.config;
  return `${c.layers.join('-')}, ReLU, softmax cross-entropy, SGD lr ${c.learningRate}, batch ${c.batch}`;
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * "resumed at step 31 from the last mirror", "resumed at step 1 from the initial parameters (no mirror
 * yet)", or per recovery when they differ.
 */
function resumedText(cp: CheckpointReport): string {
  const from = (mirror: boolean | undefined): string =>
    mirror === false ? 'from the initial parameters (no mirror yet)' : 'from the last mirror';
  const kinds = new Set(cp.resumedAt.map((_, i) => cp.resumedFromMirror[i] !== false));
  if (kinds.size <= 1) return `resumed at step ${cp.resumedAt.join(', ')} ${from(cp.resumedFromMirror[0])}`;
  return `resumed at ${cp.resumedAt.map((step, i) => `step ${step} ${from(cp.resumedFromMirror[i])}`).join(', ')}`;
}

/** The summary, one fact per line, labels aligned. */
export function formatSummary(r: TrainMlpResult): string {
  const t = r.transfers;
  const c = r.commands;
  const a = r.transient.allocator;
  const first = r.losses[0] ?? Number.NaN;
  const last = r.losses[r.losses.length - 1] ?? Number.NaN;
  const timed = r.steps - r.warmup;
  const lines: [string, string][] = [
    ['device', `${r.deviceName}, backend ${r.backend}`],
    ['model', describeModel(r)],
    ['loss', `${first.toFixed(4)} → ${last.toFixed(4)} (step 1 → ${r.steps})`],
    [
      'ms/step',
      `${r.msPerStep.toFixed(2)} (median of ${plural(timed, 'step')} after ${r.warmup} warm-up; ${(
        1000 / r.msPerStep
      ).toFixed(
        1,
      )} steps/s; ${(r.trainMs / 1000).toFixed(2)} s training, ${(r.totalMs / 1000).toFixed(2)} s in all)`,
    ],
    [
      'host → device',
      `${formatBytes(t.hostToDevice)}: weights ${formatBytes(t.weightsToDevice)} ${
        (r.checkpoint?.recoveries ?? 0) > 0 ? 'once per device' : 'once'
      }, batches ${formatBytes(
        t.batchesToDevice,
      )} (${formatBytes(t.batchesToDevice / Math.max(1, t.batchUploads))}/step${
        t.batchUploads === r.steps ? '' : `, ${plural(t.batchUploads, 'upload')}: redone steps included`
      }, upload queue, double-buffered)`,
    ],
    [
      'device → host',
      `${formatBytes(t.deviceToHost)}: weights ${formatBytes(t.weightsToHost)} once at the end, loss ${formatBytes(
        t.lossToHost,
      )} (4 B/step)${t.checkpointsToHost > 0 ? `, checkpoints ${formatBytes(t.checkpointsToHost)} (parameter mirrors)` : ''}`,
    ],
    [
      'residency',
      `${r.parameterTensors} parameter tensors (${formatBytes(r.residency.peakResidentBytes)}) resident for the whole run: ${plural(
        r.residency.transfers,
        'transfer',
      )}${
        r.residency.transfers === 2 * r.parameterTensors
          ? ' (one upload before step 1, one read-back after the last)'
          : ''
      }, ${plural(r.residency.evictions, 'eviction')}`,
    ],
    [
      'queues',
      'queue 0: alloca → execute → loss read → dealloca per step; queue 1: batch uploads into double-buffered inputs while the previous step runs',
    ],
    [
      'command buffer',
      `recorded ${c.recordings}× (${c.commandsRecorded} commands: ${c.dispatchesPerStep} dispatches, ${c.barriersPerStep} barriers), replayed ${c.replays}× with a binding table per step (${c.commandsReplayed} commands executed)`,
    ],
  ];
  if (a === undefined) {
    lines.push([
      'allocator',
      `arena ${formatBytes(r.transient.arenaBytes)}/step (no statistics on this device)`,
    ]);
  } else {
    lines.push([
      'allocator',
      `${plural(a.allocas, 'alloca')} / ${plural(a.deallocas, 'dealloca')} of a ${formatBytes(r.transient.arenaBytes)} arena; peak live ${formatBytes(
        a.peakLiveBytes,
      )}, peak reserved ${formatBytes(a.peakReservedBytes)}${
        r.transient.peaksSince === 'device'
          ? ' (peaks since the device was created, earlier work included)'
          : ''
      }`,
    ]);
    lines.push([
      '',
      `reuse: ${a.reuseDominated} same-queue (dominated, no wait), ${a.reuseFrontierReached} freed memory; ${plural(
        a.growths,
        'growth',
      )}, ${plural(a.waits, 'wait')}`,
    ]);
  }
  const cp = r.checkpoint;
  if (cp !== undefined) {
    lines.push([
      'checkpoints',
      `parameters mirrored to host every ${plural(cp.every, 'step')}: ${plural(cp.checkpoints, 'checkpoint')} (${formatBytes(
        cp.mirroredBytes,
      )} device → host on the upload queue, off the critical path), ${cp.deferred} deferred`,
    ]);
    lines.push([
      'recovery',
      cp.recoveries === 0
        ? 'no device lost'
        : `${plural(cp.recoveries, 'device')} lost and replaced; ${resumedText(cp)}; ${plural(
            cp.stepsRedone,
            'step',
          )} redone${cp.stepsUnreported > 0 ? `, the loss of ${plural(cp.stepsUnreported, 'step')} never reached the host (NaN)` : ''}`,
    ]);
  }
  const width = Math.max(...lines.map(([label]) => label.length));
  return lines.map(([label, text]) => `  ${label.padEnd(width)}  ${text}`).join('\n');
}
