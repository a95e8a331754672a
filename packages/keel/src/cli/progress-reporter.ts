/**
 * Progress of a training run on a stream: a cli-progress bar (step, loss, steps/s) on a terminal, and
 * plain lines every `every` steps (and at the last) otherwise, so logs and pipes stay readable.
 */

import type { StepProgress } from '@keel/mlp';
import cliProgress from 'cli-progress';

export interface ProgressReporter {
  /** Called with each step's progress (trainMlp's `onStep`). */
  update(progress: StepProgress): void;
  /** Ends the bar (leaves it on screen). */
  stop(): void;
}

export interface ProgressOptions {
  /** Where to write (default process.stdout). */
  readonly stream?: NodeJS.WriteStream;
  /** Total steps. */
  readonly steps: number;
  /** Force the bar (true) or plain lines (false); default: the bar when `stream.isTTY`. */
  readonly bar?: boolean;
}

/** Plain-line interval: about ten lines per run, at least every step for short runs. */
export function plainLineInterval(steps: number): number {
  return Math.max(1, Math.round(steps / 10));
}

const rate = (p: StepProgress): number => (p.elapsedMs > 0 ? (1000 * p.step) / p.elapsedMs : 0);

export function createProgressReporter(options: ProgressOptions): ProgressReporter {
  const stream = options.stream ?? process.stdout;
  const useBar = options.bar ?? stream.isTTY === true;
  if (!useBar) {
    const every = plainLineInterval(options.steps);
    const width = String(options.steps).length;
    return {
      update(p) {
        if (p.step % every !== 0 && p.step !== p.steps && p.step !== 1) return;
        stream.write(
          `step ${String(p.step).padStart(width)}/${p.steps}  loss ${p.loss.toFixed(4)}  ${rate(p).toFixed(1)} steps/s\n`,
        );
      },
      stop() {},
    };
  }
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: 'training {bar} step {value}/{total} | loss {loss} | {rate} steps/s | {duration_formatted}',
      hideCursor: true,
      clearOnComplete: false,
      barsize: 30,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(options.steps, 0, { loss: '-', rate: '-' });
  return {
    update(p) {
      bar.update(p.step, { loss: p.loss.toFixed(4), rate: rate(p).toFixed(1) });
    },
    stop() {
      bar.stop();
    },
  };
}
