/**
 * Every Node example in examples/*.mjs runs and exits 0 (each checks its own result). The list is read
 * from the folder, so a new example is tested without editing this file. The WebGPU example prints
 * `skipped: <reason>` where there is no adapter (not under CI, where it fails instead).
 */
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { examplesDir, inCi, runExample } from './run-example';

const examples = readdirSync(examplesDir)
  .filter((f) => f.endsWith('.mjs'))
  .sort();

describe('examples', () => {
  it('the folder holds the examples the README lists', () => {
    for (const name of [
      'cpu-kernel.mjs',
      'webgpu-kernel.mjs',
      'queue-alloca.mjs',
      'residency.mjs',
      'scheduler.mjs',
      'worker-fence.mjs',
    ]) {
      expect(examples).toContain(name);
    }
  });

  it.each(examples)('%s runs and checks its output', async (file, ctx) => {
    const run = await runExample(file);
    const first = run.stdout.split('\n')[0] ?? '';
    if (run.code === 0 && first.startsWith('skipped:') && !inCi()) ctx.skip(first);
    expect(run.code, `${file} failed:\n${run.stdout}\n${run.stderr}`).toBe(0);
    expect(first.startsWith('skipped:'), 'skipped under CI').toBe(false);
    expect(run.stdout.trim().length).toBeGreaterThan(0);
  });

  it('an example that finds a wrong result exits non-zero (the check can fail)', async () => {
    // The CPU kernel example with a broken kernel: the same program, a kernel that computes y = a*x.
    const { mkdtempSync, writeFileSync, readFileSync, rmSync, mkdirSync } = await import('node:fs');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(examplesDir, '.broken-'));
    try {
      mkdirSync(join(dir, 'kernels'));
      const kernel = readFileSync(join(examplesDir, 'kernels/saxpy.mjs'), 'utf8');
      const broken = kernel.replace('y[i] = a * x[i] + y[i]', 'y[i] = a * x[i]');
      expect(broken).not.toBe(kernel);
      writeFileSync(join(dir, 'kernels/saxpy.mjs'), broken);
      writeFileSync(join(dir, 'cpu-kernel.mjs'), readFileSync(join(examplesDir, 'cpu-kernel.mjs'), 'utf8'));
      const run = await runExample(join(dir, 'cpu-kernel.mjs'));
      expect(run.code).not.toBe(0);
      expect(run.stderr).toMatch(/sync mode, problem 0: y\[\d+\] = .*, expected/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
