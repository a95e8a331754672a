#!/usr/bin/env node
// `pnpm bench <suite> [--json]`: builds the packages (build output goes to stderr so `--json` stdout stays
// one JSON object), then runs the suite with tsx over the built packages.
import { spawnSync } from 'node:child_process';

const build = spawnSync('pnpm', ['exec', 'turbo', 'run', 'build', '--output-logs=errors-only'], {
  stdio: ['ignore', process.stderr, process.stderr],
});
if (build.status !== 0) process.exit(build.status ?? 1);
const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/src/main.ts', ...process.argv.slice(2)], {
  stdio: 'inherit',
});
process.exit(run.status ?? 1);
