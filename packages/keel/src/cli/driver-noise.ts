/**
 * Dawn (the WebGPU implementation in Node) prints its own warnings from native code straight to the
 * process's stderr, e.g. "Warning: maxDynamicUniformBuffersPerPipelineLayout artificially reduced from
 * 1000000 to 16 to fit dynamic offset allocation limit." They are not about Keel or the user's work, so
 * the CLI hides them unless `--verbose` is given. Native writes cannot be intercepted in-process: the
 * CLI runs itself as a child with stderr piped and drops those lines (stdout and stdin are inherited,
 * so terminals, progress bars and exit codes behave as before). Any other stderr line passes through.
 */
import { spawn } from 'node:child_process';
import { exitCodeOf } from './exit-codes';

/** Set in the child so that it does not spawn again. */
export const FILTERED_ENV = 'KEEL_CLI_STDERR_FILTERED';

/** True for a line of Dawn's own limit warnings. */
export function isDriverNoise(line: string): boolean {
  return /^Warning: \S+ artificially reduced from \d+ to \d+\b/.test(line);
}

/** A line filter over chunks of text: `push` returns the complete lines to keep, `end` the rest. */
export function createLineFilter(keep: (line: string) => boolean): {
  push(chunk: string): string;
  end(): string;
} {
  let pending = '';
  return {
    push(chunk) {
      pending += chunk;
      const last = pending.lastIndexOf('\n');
      if (last < 0) return '';
      const complete = pending.slice(0, last + 1);
      pending = pending.slice(last + 1);
      return complete
        .split(/(?<=\n)/)
        .filter((line) => keep(line.replace(/\r?\n$/, '')))
        .join('');
    },
    end() {
      const rest = pending;
      pending = '';
      return rest === '' || !keep(rest) ? '' : rest;
    },
  };
}

/**
 * Whether this process should re-run itself with filtered stderr: not with `--verbose`, not for
 * `--version`/`--help` (they never touch WebGPU), not in the child itself.
 */
export function shouldFilter(argv: readonly string[], env: NodeJS.ProcessEnv): boolean {
  if (env[FILTERED_ENV] === '1') return false;
  const args = argv.slice(2);
  if (args.length === 0) return false;
  return !args.some(
    (a) => a === '--verbose' || a === '--version' || a === '-V' || a === '--help' || a === '-h',
  );
}

/**
 * Runs this CLI again as a child with stderr filtered; resolves with the exit code to use: the child's,
 * or 128 + the signal's number when a signal ended it (Ctrl-C: 130, SIGTERM: 143), as without the filter.
 */
export function runFiltered(argv: readonly string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const [node, ...rest] = argv;
    const child = spawn(node ?? process.execPath, [...process.execArgv, ...rest], {
      stdio: ['inherit', 'inherit', 'pipe'],
      env: { ...process.env, [FILTERED_ENV]: '1' },
    });
    const filter = createLineFilter((line) => !isDriverNoise(line));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      const out = filter.push(chunk);
      if (out !== '') process.stderr.write(out);
    });
    const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
    const onInt = forward('SIGINT');
    const onTerm = forward('SIGTERM');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      const rest = filter.end();
      if (rest !== '') process.stderr.write(rest);
      resolve(exitCodeOf(code, signal));
    });
  });
}
