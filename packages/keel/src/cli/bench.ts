/**
 * `keel bench [suite] [--json]`: runs the repository's benchmark runner (bench/src/main.ts, with tsx)
 * on one suite or, without a suite, on all of them. The suites ship with the Keel repository, not with
 * the package: the runner is looked up from the working directory and from the package's own location
 * (a workspace checkout), and outside a checkout the command says so in one line.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';

/** The runner's path inside a checkout. */
export const BENCH_RUNNER = path.join('bench', 'src', 'main.ts');

/** The checkout root holding bench/src/main.ts at or above one of `starts`, or undefined. */
export function findBenchRoot(starts: readonly string[]): string | undefined {
  for (const start of starts) {
    let dir = path.resolve(start);
    for (;;) {
      if (existsSync(path.join(dir, BENCH_RUNNER))) return dir;
      const up = path.dirname(dir);
      if (up === dir) break;
      dir = up;
    }
  }
  return undefined;
}

/** Runs the runner in `root` with `args`; resolves with its exit code. */
export function runBench(root: string, args: readonly string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', BENCH_RUNNER, ...args], {
      cwd: root,
      stdio: 'inherit',
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve(code ?? (signal === null ? 1 : 128)));
  });
}

export function benchCommand(parent: Command): Command {
  return parent
    .command('bench')
    .description('run benchmark suites (all of them without a suite name); needs the Keel repository')
    .argument('[suite]', 'suite name, e.g. mlp (see `keel bench --list`)')
    .option('--json', 'print one JSON object (DESIGN.md § Benchmark output)')
    .option('--list', 'list the suites')
    .action(async (suite: string | undefined, options: { json?: boolean; list?: boolean }) => {
      const root = findBenchRoot([process.cwd(), path.dirname(fileURLToPath(import.meta.url))]);
      if (root === undefined) {
        process.stderr.write(
          'keel bench: the benchmark suites ship with the Keel repository (bench/src/main.ts), not with the package; run it from a checkout (`pnpm bench`)\n',
        );
        process.exit(1);
      }
      const args = options.list
        ? ['--help']
        : [...(suite === undefined ? [] : [suite]), ...(options.json ? ['--json'] : [])];
      process.exit(await runBench(root, args));
    });
}
