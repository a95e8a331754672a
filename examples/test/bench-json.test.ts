/**
 * `pnpm bench <suite> --json` (DESIGN.md § Benchmark output): stdout is one JSON object
 * `{ "suite", "machine": { "cpus", "node", "adapter"? }, "metrics": { name: { "value", "unit" } } }`.
 * Checked on the command-buffer suite (about a second): the runner `pnpm bench` starts once its build
 * is done (scripts/bench.mjs) is spawned as that script spawns it, without the build (turbo must not
 * rewrite dist/ under the tests running beside this one). It writes nothing into bench/results.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { examplesDir } from './run-example';

const root = join(examplesDir, '..');
const RUNNER = ['--import', 'tsx', 'bench/src/main.ts'];

function runBench(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...RUNNER, ...args], { cwd: root, timeout: 60_000 });
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

/** bench/results as name → size and modification time. */
function resultsSnapshot(): Record<string, string> {
  const dir = join(root, 'bench', 'results');
  return Object.fromEntries(
    readdirSync(dir).map((name) => {
      const s = statSync(join(dir, name));
      return [name, `${s.size} ${s.mtimeMs}`];
    }),
  );
}

describe('pnpm bench <suite> --json', () => {
  it('scripts/bench.mjs runs bench/src/main.ts with the arguments it was given', () => {
    const script = readFileSync(join(root, 'scripts', 'bench.mjs'), 'utf8');
    expect(script).toContain(`[${RUNNER.map((a) => `'${a}'`).join(', ')}, ...process.argv.slice(2)]`);
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.bench).toBe('node scripts/bench.mjs');
  });

  it("prints DESIGN.md's { suite, machine, metrics } object and nothing else on stdout; writes no results", async () => {
    const before = resultsSnapshot();
    const r = await runBench(['command-buffer', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(Object.keys(result).sort()).toEqual(['machine', 'metrics', 'suite']);
    expect(result.suite).toBe('command-buffer');
    const machine = result.machine as Record<string, unknown>;
    expect(Object.keys(machine).every((k) => ['cpus', 'node', 'adapter'].includes(k))).toBe(true);
    expect(machine.cpus).toMatch(/^\d+ × \S/);
    expect(machine.node).toBe(process.version);
    if ('adapter' in machine) expect(typeof machine.adapter).toBe('string');
    const metrics = result.metrics as Record<string, Record<string, unknown>>;
    expect(Object.keys(metrics)).toEqual(
      expect.arrayContaining(['record_us_per_dispatch', 'submit_validate_us', 'replay_us_per_dispatch']),
    );
    for (const [name, metric] of Object.entries(metrics)) {
      expect(Object.keys(metric).sort(), name).toEqual(['unit', 'value']);
      expect(Number.isFinite(metric.value), `${name}.value`).toBe(true);
      expect(typeof metric.unit === 'string' && metric.unit.length > 0, `${name}.unit`).toBe(true);
    }
    expect(metrics.record_us_per_dispatch?.unit).toBe('us');
    // Progress goes to stderr; bench/results is written by hand, never by a run.
    expect(r.stderr).toContain('[command-buffer] running');
    expect(resultsSnapshot()).toEqual(before);
  });
});
