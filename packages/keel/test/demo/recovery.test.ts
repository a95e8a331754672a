/**
 * `keel demo --checkpoint-every K --lose-device-at S`: the CLI destroys the device after step S and
 * says how the run recovered (the recovery itself, `trainMlp({ checkpointEvery })`, is tested in
 * packages/mlp/test/train/recovery.test.ts). Spawns the built CLI (`pnpm build` first).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

describe('keel demo survives a lost CPU device', { timeout: 180_000 }, () => {
  it('keel demo --checkpoint-every 5 --lose-device-at 12: says what was lost and how it recovered', () => {
    const cli = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
    const args = [
      'demo',
      '--steps',
      '30',
      '--batch',
      '64',
      '--checkpoint-every',
      '5',
      '--lose-device-at',
      '12',
    ];
    const run = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', timeout: 120_000 });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /device lost after step 1[2-4] \(.*destroyed.*\); new device cpu .*: resuming at step 1[16] from the last mirror, \d steps? redone/,
    );
    expect(run.stdout).toContain('trained 30 steps');
    expect(run.stdout).toMatch(/checkpoints +parameters mirrored to host every 5 steps: \d+ checkpoints/);
    expect(run.stdout).toMatch(
      /recovery +1 device lost and replaced; resumed at step 1[16] from the last mirror/,
    );
    const without = spawnSync(process.execPath, [cli, 'demo', '--steps', '3', '--lose-device-at', '2'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(without.status).toBe(1);
    expect(without.stderr).toContain('--lose-device-at needs --checkpoint-every');
  });

  it('a loss before the first mirror: the summary says the run resumed from the initial parameters', () => {
    const cli = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
    const args = [
      'demo',
      '--steps',
      '4',
      '--batch',
      '32',
      '--checkpoint-every',
      '5',
      '--lose-device-at',
      '1',
    ];
    const run = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', timeout: 60_000 });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain('resuming at step 1 from the initial parameters (no mirror yet)');
    expect(run.stdout).toMatch(
      /recovery +1 device lost and replaced; resumed at step 1 from the initial parameters \(no mirror yet\)/,
    );
    expect(run.stdout).not.toContain('from the last mirror');
  });
});
