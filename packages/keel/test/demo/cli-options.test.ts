/**
 * `keel demo` and `keel bench` refuse what they cannot do, in one line naming the option, with exit
 * status 1 and before any training step: `--trace`/`--trace-steps` with `--devices`, `--trace-steps`
 * without `--trace`, a `--trace` file that cannot be written, a `--devices` list naming an adapter that
 * is not there or more devices than `--batch` has rows (before the first line, naming the flag and the
 * code), the package suite's options given to the
 * repository's runner in a checkout, an unknown suite there. Also the wording of a one-step run.
 * Spawns the built CLI (`pnpm build` first).
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pkgDir, runCli } from './run-cli';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'keel-cli-options-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Exit 1, one line on stderr matching `message`, no training step on stdout. */
function expectRefused(r: { code: number | null; stdout: string; stderr: string }, message: RegExp): void {
  expect(r.code, r.stderr).toBe(1);
  expect(r.stderr.trimEnd().split('\n'), r.stderr).toHaveLength(1);
  expect(r.stderr.trimEnd()).toMatch(message);
  expect(r.stderr).not.toMatch(/\n\s+at /);
  expect(r.stdout).not.toMatch(/^step /m);
}

describe('keel demo refuses options it would ignore', { timeout: 60_000 }, () => {
  it('--trace and --trace-steps with --devices', async () => {
    const file = path.join(tmp, 'dp.json');
    const trace = await runCli(['demo', '--devices', 'cpu:2', '--steps', '2', '--trace', file]);
    expectRefused(
      trace,
      /^keel demo: --trace and --trace-steps are for one device; leave them out with --devices$/,
    );
    const steps = await runCli(['demo', '--devices', 'cpu:2', '--steps', '2', '--trace-steps', '2']);
    expectRefused(steps, /--trace and --trace-steps are for one device/);
  });

  it('a --devices list the adapters or --batch cannot take, before the first line, naming the flag', async () => {
    const far = await runCli(['demo', '--devices', 'cpu,webgpu:7', '--steps', '1']);
    expectRefused(
      far,
      /^keel demo: OUT_OF_RANGE: --devices: 'webgpu:7' names WebGPU adapter 7, but \d+ adapter\(s\) are present/,
    );
    expect(far.stdout).toBe('');
    const rows = await runCli(['demo', '--devices', 'cpu:3', '--batch', '2', '--steps', '1']);
    expectRefused(
      rows,
      /^keel demo: INVALID_ARGUMENT: --batch \(2\) must give each of the 3 devices at least one row$/,
    );
    expect(rows.stdout).toBe('');
  });

  it('--trace-steps without --trace', async () => {
    const r = await runCli(['demo', '--steps', '2', '--trace-steps', '2']);
    expectRefused(r, /^keel demo: --trace-steps needs --trace /);
  });

  it('a --trace file that cannot be written, before training', async () => {
    const missing = await runCli(['demo', '--steps', '3', '--trace', '/nonexistent/dir/t.json']);
    expectRefused(
      missing,
      /^error: option '--trace <file>' argument '\/nonexistent\/dir\/t.json' is invalid\. folder '\/nonexistent\/dir' does not exist\.$/,
    );
    const folder = await runCli(['demo', '--steps', '3', '--trace', tmp]);
    expectRefused(
      folder,
      /^error: option '--trace <file>' argument '.*' is invalid\. it is a folder; expected a file to write\.$/,
    );
  });
});

describe('keel demo wording', { timeout: 60_000 }, () => {
  it('a one-step run says "1 step"', async () => {
    const r = await runCli(['demo', '--steps', '1', '--batch', '16']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(') for 1 step on cpu\n');
    expect(r.stdout).toContain('\ntrained 1 step\n');
    expect(r.stdout).not.toMatch(/(^|[^\d.])1 steps\b/m);
  });
});

describe('keel bench in a checkout', { timeout: 60_000 }, () => {
  it("refuses the package suite's options instead of running the full repository suite", async () => {
    // A checkout whose runner only says it ran: were the options dropped again, no suite would run.
    const checkout = path.join(tmp, 'checkout');
    mkdirSync(path.join(checkout, 'bench', 'src'), { recursive: true });
    writeFileSync(
      path.join(checkout, 'bench', 'src', 'main.ts'),
      "process.stdout.write('runner ran: ' + process.argv.slice(2).join(' ') + '\\n');\n",
    );
    symlinkSync(path.resolve(pkgDir, '../../node_modules'), path.join(checkout, 'node_modules'), 'dir');
    const r = await runCli(['bench', 'mlp', '--device', 'cpu', '--steps', '2', '--rounds', '1'], {
      cwd: checkout,
    });
    expect(r.stdout).not.toContain('runner ran');
    expectRefused(
      r,
      /^keel bench: --device, --rounds and --steps are options of the package's own mlp suite, which a checkout runs only with --packaged/,
    );
  });

  it('refuses an unknown suite in one line (the repository runner, which stops before any suite)', async () => {
    const r = await runCli(['bench', 'bogus'], { cwd: pkgDir });
    expectRefused(r, /^unknown suite 'bogus'; the suites: .*\bmlp\b/);
  });
});
