/**
 * Test helper: spawns the built `keel` CLI (dist/cli.js) as a user runs it and collects its exit
 * status and output. `onStdout` sees each chunk with the child, so a test can close the pipe or send
 * a signal mid-run. Not a test file itself.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const pkgDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const cliPath = path.join(pkgDir, 'dist', 'cli.js');

export interface CliRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliRunOptions {
  readonly cwd?: string;
  /** The CLI script to run (default: this package's dist/cli.js; e.g. an installed copy's). */
  readonly script?: string;
  /** Extra environment variables (KEEL_RELAXED_SIMD is unset unless given here). */
  readonly env?: Readonly<Record<string, string>>;
  readonly onStdout?: (chunk: string, child: ChildProcessWithoutNullStreams, stdout: string) => void;
}

/** Runs `keel ARGS` (stderr filtered, as without --verbose) and resolves once it exited. */
export function runCli(args: readonly string[], options: CliRunOptions = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, ...options.env };
    delete env.KEEL_CLI_STDERR_FILTERED;
    if (options.env?.KEEL_RELAXED_SIMD === undefined) delete env.KEEL_RELAXED_SIMD;
    const child = spawn(process.execPath, [options.script ?? cliPath, ...args], {
      cwd: options.cwd ?? os.tmpdir(),
      env,
      timeout: 120_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      options.onStdout?.(d.toString(), child, stdout);
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}
