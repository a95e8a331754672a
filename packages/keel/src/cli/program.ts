/**
 * The `keel` command line as a commander program: one command per file in this folder, wired here.
 * `cli.ts` parses `process.argv` with it; tests build it with `exitOverride` and captured output.
 */
import { Command } from 'commander';
import { benchCommand } from './bench';
import { demoCommand } from './demo';
import { infoCommand } from './info';
import { packageVersion } from './version';

/**
 * The program with every command. `configure` runs before the commands are added, so settings such
 * as `exitOverride()` and `configureOutput()` are inherited by every command.
 */
export function createProgram(configure?: (program: Command) => void): Command {
  const program = new Command('keel')
    .description('Keel: a TypeScript runtime for machine-learning execution')
    .version(packageVersion(), '-V, --version', 'print the version of the keel package')
    .option('--verbose', "also show the WebGPU driver's own warnings (Dawn's 'artificially reduced' lines)");
  configure?.(program);
  demoCommand(program);
  benchCommand(program);
  infoCommand(program);
  return program;
}
