/**
 * How the `keel` command ends when something outside it ends it: a child killed by a signal (the
 * filtered child of driver-noise.ts, the benchmark runner) exits with 128 + the signal's number, as
 * shells report it (SIGINT 130, SIGTERM 143); a reader that goes away (`keel demo | head -1`: EPIPE on
 * stdout or stderr) ends the process quietly with 141 (128 + SIGPIPE), as the tools that die of
 * SIGPIPE do, without a stack trace.
 */
import os from 'node:os';

/** Exit status for SIGPIPE, used when stdout or stderr has no reader any more. */
export const BROKEN_PIPE_EXIT = 128 + os.constants.signals.SIGPIPE;

/** The exit status that reports a child's end: its code, or 128 + the number of the signal that killed it. */
export function exitCodeOf(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  if (signal === null) return 1;
  return 128 + (os.constants.signals[signal] ?? 0);
}

/**
 * Ends the process quietly (BROKEN_PIPE_EXIT) when `streams` (default stdout and stderr) report EPIPE;
 * any other stream error is rethrown as before.
 */
export function exitQuietlyOnBrokenPipe(
  streams: readonly NodeJS.WritableStream[] = [process.stdout, process.stderr],
): void {
  for (const stream of streams) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(BROKEN_PIPE_EXIT);
      throw error;
    });
  }
}
