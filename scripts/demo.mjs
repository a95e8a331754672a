#!/usr/bin/env node
// `pnpm demo [--device cpu|webgpu] [--steps N] [--batch B]`: builds the umbrella package and what it
// depends on quietly (one line on stderr; the build's own output only if it fails, also on stderr), then
// runs `keel demo` with the arguments.
import { spawnSync } from 'node:child_process';

process.stderr.write('building keel and its packages (turbo, cached)…\n');
const build = spawnSync(
  'pnpm',
  ['exec', 'turbo', 'run', 'build', '--filter=keel...', '--output-logs=errors-only'],
  { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' },
);
if (build.status !== 0) {
  process.stderr.write(`${build.stdout ?? ''}${build.stderr ?? ''}`);
  process.stderr.write(`pnpm demo: the build failed${build.error ? ` (${build.error.message})` : ''}\n`);
  process.exit(build.status ?? 1);
}
const args = process.argv.slice(2);
// `pnpm demo -- --steps 50` passes the `--` through: drop it.
if (args[0] === '--') args.shift();
const run = spawnSync(process.execPath, ['packages/keel/dist/cli.js', 'demo', ...args], { stdio: 'inherit' });
process.exit(run.status ?? 1);
