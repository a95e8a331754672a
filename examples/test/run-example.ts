/**
 * Runs one example as a user would (`node examples/<name>.mjs`, from the examples folder, against the
 * built packages) and returns its exit code and output. An example asserts its own result and exits
 * non-zero when it is wrong; a first stdout line starting with `skipped:` says why it could not run here.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const examplesDir = fileURLToPath(new URL('..', import.meta.url));

export interface ExampleRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function runExample(file: string, timeoutMs = 30_000): Promise<ExampleRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file], { cwd: examplesDir, timeout: timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** True where CI is set: a missing adapter or browser is then a failure, not a skip. */
export function inCi(): boolean {
  const ci = process.env.CI;
  return ci !== undefined && ci !== '' && ci !== 'false';
}
