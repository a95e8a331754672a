/**
 * `keel bench [suite] [--json]`: in a Keel checkout, runs the repository's benchmark runner
 * (bench/src/main.ts, with tsx) on one suite or, without a suite, on all of them; the runner is looked
 * up from the working directory and from the package's own location. Outside a checkout (the installed
 * package) it runs the suites the package can run on its own (bench-packaged.ts: the `mlp` suite's Keel
 * sides), with the same JSON output; another suite name there is refused in one line naming what it can
 * run. `--packaged` takes the package's own path in a checkout too.
 *
 * The options of the package's suite (`--device`, `--rounds`, `--steps`) mean nothing to the
 * repository's runner (it takes a suite and `--json`): in a checkout without `--packaged` they are
 * refused in one line (exit 1) rather than dropped, which would run the full suite. An unknown suite
 * is refused by the runner in one line (exit 1). A runner killed by a signal exits 128 + its number.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Command, Option } from 'commander';
import { formatBenchResult, PACKAGED_SUITES, REPOSITORY_SUITES, runPackagedMlp } from './bench-packaged';
import { positiveInteger } from './demo';
import { exitCodeOf } from './exit-codes';

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
    child.on('exit', (code, signal) => resolve(exitCodeOf(code, signal)));
  });
}

/** Options only the package's own suite takes: [commander key, flag]. */
const PACKAGED_ONLY_OPTIONS: readonly (readonly [string, string])[] = [
  ['device', '--device'],
  ['rounds', '--rounds'],
  ['steps', '--steps'],
];

/** "--a", "--a and --b", "--a, --b and --c". */
function listed(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

interface BenchOptions {
  readonly json?: boolean;
  readonly list?: boolean;
  readonly packaged?: boolean;
  readonly device: 'cpu' | 'webgpu' | 'all';
  readonly rounds?: number;
  readonly steps?: number;
}

/** The package's own suites (no checkout): resolves with the exit code. */
async function runPackaged(suite: string | undefined, options: BenchOptions): Promise<number> {
  if (options.list) {
    process.stdout.write(`${PACKAGED_SUITES.join('\n')}\n`);
    return 0;
  }
  if (suite !== undefined && !REPOSITORY_SUITES.includes(suite)) {
    process.stderr.write(
      `keel bench: unknown suite '${suite}' (the package runs: ${PACKAGED_SUITES.join(', ')}; a Keel checkout runs: ${REPOSITORY_SUITES.join(', ')})\n`,
    );
    return 1;
  }
  if (suite !== undefined && !PACKAGED_SUITES.includes(suite)) {
    process.stderr.write(
      `keel bench: suite '${suite}' ships with the Keel repository (bench/src/main.ts), not with the package; the package runs: ${PACKAGED_SUITES.join(', ')} (Keel sides). Run it from a checkout (\`pnpm bench ${suite}\`)\n`,
    );
    return 1;
  }
  process.stderr.write(
    "keel bench: not in a Keel checkout: running the mlp suite's Keel sides (TF.js, numpy and PyTorch peers and the other suites need the repository)\n",
  );
  const result = await runPackagedMlp(
    {
      device: options.device,
      ...(options.rounds === undefined ? {} : { rounds: options.rounds }),
      ...(options.steps === undefined ? {} : { steps: options.steps }),
    },
    (line) => process.stderr.write(`${line}\n`),
  );
  process.stdout.write(options.json ? `${JSON.stringify(result)}\n` : `${formatBenchResult(result)}\n`);
  return 0;
}

export function benchCommand(parent: Command): Command {
  return parent
    .command('bench')
    .description(
      "run benchmark suites (all of them without a suite name); outside a Keel checkout, the mlp suite's Keel sides",
    )
    .argument('[suite]', 'suite name, e.g. mlp (see `keel bench --list`)')
    .option('--json', 'print one JSON object (DESIGN.md § Benchmark output)')
    .option('--list', 'list the suites')
    .option('--packaged', "run the package's own suites even in a checkout")
    .addOption(
      new Option('--device <kind>', "package's mlp suite: devices to measure")
        .choices(['cpu', 'webgpu', 'all'])
        .default('all'),
    )
    .option('--rounds <n>', "package's mlp suite: rounds per device", positiveInteger(1000))
    .option('--steps <n>', "package's mlp suite: timed steps per run", positiveInteger(100_000))
    .action(async (suite: string | undefined, options: BenchOptions, command: Command) => {
      const root = options.packaged
        ? undefined
        : findBenchRoot([process.cwd(), path.dirname(fileURLToPath(import.meta.url))]);
      const packagedOnly = PACKAGED_ONLY_OPTIONS.filter(
        ([key]) => command.getOptionValueSource(key) === 'cli',
      ).map(([, flag]) => flag);
      if (root !== undefined && packagedOnly.length > 0) {
        process.stderr.write(
          `keel bench: ${listed(packagedOnly)} ${packagedOnly.length === 1 ? 'is an option' : 'are options'} of the package's own mlp suite, which a checkout runs only with --packaged (the repository's runner takes a suite name and --json)\n`,
        );
        process.exit(1);
      }
      if (root === undefined) {
        const code = await runPackaged(suite, options);
        // Dawn can keep the loop alive after its device is destroyed; everything is printed, so exit.
        process.exit(code);
      }
      const args = options.list
        ? ['--help']
        : [...(suite === undefined ? [] : [suite]), ...(options.json ? ['--json'] : [])];
      process.exit(await runBench(root, args));
    });
}
