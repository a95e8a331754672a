/**
 * The built `keel` CLI (dist/cli.js), spawned as a user runs it: `--version`, `keel demo`'s progress
 * lines and summary (DESIGN.md § The main job), `info` (the defaults `keel demo` uses), Dawn's own
 * warnings hidden unless `--verbose`, and `keel bench` from an installed copy of the package outside
 * any checkout (the package's own mlp suite, DESIGN.md's JSON output).
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLineFilter, isDriverNoise, shouldFilter } from '../../src/cli/driver-noise';
import { runCli } from './run-cli';

const pkgDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const version = (JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as { version: string })
  .version;

const run = runCli;

describe('keel --version', () => {
  it.each([['--version'], ['-V']])('%s prints the package version', async (flag) => {
    const r = await run([flag]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${version}\n`);
  });
});

/** "2.68 MB", "12 B": formatBytes' output back to bytes (three significant digits). */
function bytesOf(text: string): number {
  const m = /^([\d.]+) (B|kB|MB|GB)$/.exec(text);
  if (m === null) throw new Error(`not a byte count: '${text}'`);
  return Number(m[1]) * { B: 1, kB: 1e3, MB: 1e6, GB: 1e9 }[m[2] as 'B' | 'kB' | 'MB' | 'GB'];
}

describe('keel demo', () => {
  it("prints DESIGN.md's progress (step, loss, steps/s) and summary (ms/step, bytes per direction, commands recorded vs replayed, allocator peaks)", async () => {
    const r = await run(['demo', '--steps', '3', '--batch', '32']);
    expect(r.code, r.stderr).toBe(0);
    const out = r.stdout;
    // Not a terminal: one plain progress line per step of a short run.
    const progress = [...out.matchAll(/^step (\d+)\/3 {2}loss (\d+\.\d{4}) {2}(\d+\.\d) steps\/s$/gm)];
    expect(progress.map((m) => Number(m[1]))).toEqual([1, 2, 3]);
    for (const m of progress) expect(Number(m[3])).toBeGreaterThan(0);
    const line = (label: string): string => {
      const found = out.split('\n').find((l) => l.startsWith(`  ${label} `));
      expect(found, `the summary's '${label}' line`).toBeDefined();
      return found!.slice(2 + label.length).trim();
    };
    expect(line('loss')).toBe(`${progress[0]![2]} → ${progress[2]![2]} (step 1 → 3)`);
    const ms = /^(\d+\.\d+) \(median of 3 steps after \d+ warm-up; (\d+\.\d) steps\/s; /.exec(
      line('ms/step'),
    );
    expect(ms, line('ms/step')).not.toBeNull();
    expect(Number(ms![1])).toBeGreaterThan(0);
    // Bytes per direction: the parameters (669 706 f32 = 2.68 MB) once each way, batches up, losses down.
    const up = /^(\S+ \S+): weights 2\.68 MB once, batches (\S+ \S+) \((\S+ \S+)\/step, upload queue/.exec(
      line('host → device'),
    );
    expect(up, line('host → device')).not.toBeNull();
    // Figures have three significant digits: compare within 1 %.
    const total = bytesOf(up![1]!);
    expect(Math.abs(total - 2.68e6 - bytesOf(up![2]!))).toBeLessThanOrEqual(0.01 * total);
    expect(bytesOf(up![3]!)).toBeGreaterThanOrEqual(0.99 * 32 * 784 * 4); // a batch of 32 inputs
    expect(line('device → host')).toMatch(
      /^2\.68 MB: weights 2\.68 MB once at the end, loss 12 B \(4 B\/step\)$/,
    );
    // Recorded once, replayed every step.
    const cb =
      /^recorded 1× \((\d+) commands: (\d+) dispatches, (\d+) barriers\), replayed 3× with a binding table per step \((\d+) commands executed\)$/.exec(
        line('command buffer'),
      );
    expect(cb, line('command buffer')).not.toBeNull();
    const [recorded, dispatches, barriers, executed] = cb!.slice(1).map(Number) as [
      number,
      number,
      number,
      number,
    ];
    expect(dispatches).toBeGreaterThan(0);
    expect(dispatches + barriers).toBe(recorded);
    expect(executed).toBe(3 * recorded);
    // The queue allocator: one alloca and one dealloca per step, and its peaks.
    const alloc =
      /^3 allocas \/ 3 deallocas of a (\S+ \S+) arena; peak live (\S+ \S+), peak reserved (\S+ \S+)$/.exec(
        line('allocator'),
      );
    expect(alloc, line('allocator')).not.toBeNull();
    const [arena, live, reserved] = alloc!.slice(1).map(bytesOf) as [number, number, number];
    expect(live).toBeGreaterThanOrEqual(arena);
    expect(reserved).toBeGreaterThanOrEqual(live);
  });
});

describe('keel demo --devices', () => {
  it('trains data-parallel on two CPU devices and shows where the scheduler placed the last step', async () => {
    const r = await run(['demo', '--devices', 'cpu:2', '--steps', '3', '--batch', '32']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('data-parallel on cpu:2');
    expect(r.stdout).toContain('16 of 32 rows');
    expect(r.stdout).toContain('replicas identical after the run: yes');
    expect(r.stdout).toMatch(/host-call on cpu:\d compute +\(join\)/);
    expect(r.stdout).toMatch(/execute +on cpu:1 compute +\(explicit\)/);
    expect(r.stdout).toContain('gradients pinned (read in place)');
  });

  it('refuses --device with --devices, and an adapter index beyond those present', async () => {
    const both = await run(['demo', '--device', 'cpu', '--devices', 'cpu:2', '--steps', '1']);
    expect(both.code).toBe(1);
    expect(both.stderr).toContain('--device and --devices exclude each other');
    const far = await run(['demo', '--devices', 'webgpu:7', '--steps', '1']);
    expect(far.code).toBe(1);
    expect(far.stderr).toContain("'webgpu:7' names WebGPU adapter 7");
  });
});

describe('keel info', () => {
  it('reports the devices as keel demo opens them: the CPU device in task mode, 2 queues, every core', async () => {
    const r = await run(['info', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const reports = JSON.parse(r.stdout) as {
      kind: string;
      available: boolean;
      mode?: string;
      workersPerQueue?: number;
      info?: { queueCount: number; name: string };
      demo: { steps: number; batch: number };
      adapters?: { index: number; name: string; backend: string; selectable: boolean }[];
    }[];
    const cpu = reports.find((x) => x.kind === 'cpu');
    expect(cpu?.available).toBe(true);
    expect(cpu?.mode).toBe('task');
    expect(cpu?.info?.queueCount).toBe(2);
    expect(cpu?.workersPerQueue).toBe(os.availableParallelism());
    expect(cpu?.demo).toEqual({ steps: 600, batch: 256 });
    const gpu = reports.find((x) => x.kind === 'webgpu');
    expect(gpu?.demo).toEqual({ steps: 100, batch: 256 });
    if (gpu?.available) expect(gpu.info?.queueCount).toBe(2);
    // The adapters `keel demo --devices webgpu:I` indexes: at least one where WebGPU is available.
    expect(Array.isArray(gpu?.adapters)).toBe(true);
    if (gpu?.available) expect(gpu.adapters?.[0]).toMatchObject({ index: 0, selectable: true });
  });

  it("runs the CPU kernels with relaxed SIMD (Node 20: the CLI turns V8's flag on) unless KEEL_RELAXED_SIMD=0", async () => {
    type Gemm = { kind: string; gemm?: string }[];
    const on = JSON.parse((await run(['info', '--json'])).stdout) as Gemm;
    expect(on.find((x) => x.kind === 'cpu')?.gemm).toBe('relaxed-simd');
    const off = await run(['info', '--json'], { env: { KEEL_RELAXED_SIMD: '0' } });
    const nodeMajor = Number(process.versions.node.split('.')[0]);
    // Node 22+ has relaxed SIMD on without any flag; only Node 20 needs (and honours) the opt-out.
    expect((JSON.parse(off.stdout) as Gemm).find((x) => x.kind === 'cpu')?.gemm).toBe(
      nodeMajor >= 22 ? 'relaxed-simd' : 'simd',
    );
    expect((await run(['info'])).stdout).toContain('mlp GEMM: relaxed SIMD (fused multiply-add)');
  });

  it("hides Dawn's 'artificially reduced' warnings unless --verbose", async () => {
    const [quiet, verbose] = [await run(['info']), await run(['info', '--verbose'])];
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(verbose.code, verbose.stderr).toBe(0);
    expect(quiet.stdout).toMatch(/^cpu: cpu \(task, /m);
    expect(quiet.stderr).not.toMatch(/artificially reduced/);
    // Whether Dawn prints them depends on the driver; where it does, --verbose shows them.
    if (/webgpu: llvmpipe/.test(verbose.stdout)) expect(verbose.stderr).toMatch(/artificially reduced/);
    expect(quiet.stdout.split('\n').filter((l) => !l.startsWith('host:'))).toEqual(
      verbose.stdout.split('\n').filter((l) => !l.startsWith('host:')),
    );
  });

  it('the stderr filter drops only the driver lines, across chunk boundaries', () => {
    const line =
      'Warning: maxDynamicUniformBuffersPerPipelineLayout artificially reduced from 1000000 to 16 to fit dynamic offset allocation limit.';
    expect(isDriverNoise(line)).toBe(true);
    expect(isDriverNoise('Warning: something else')).toBe(false);
    expect(isDriverNoise('keel: artificially reduced is in this message')).toBe(false);
    const filter = createLineFilter((l) => !isDriverNoise(l));
    const out = [
      filter.push(`${line.slice(0, 30)}`),
      filter.push(`${line.slice(30)}\nreal err`),
      filter.push('or\n'),
      filter.push('tail'),
    ];
    expect(out.join('') + filter.end()).toBe('real error\ntail');
    expect(shouldFilter(['node', 'cli.js', 'info'], {})).toBe(true);
    expect(shouldFilter(['node', 'cli.js', 'info', '--verbose'], {})).toBe(false);
    expect(shouldFilter(['node', 'cli.js', '--version'], {})).toBe(false);
    expect(shouldFilter(['node', 'cli.js', 'info'], { KEEL_CLI_STDERR_FILTERED: '1' })).toBe(false);
  });
});

describe('keel bench from an installed package, outside a checkout', () => {
  let dir = '';
  let installed = '';
  beforeAll(() => {
    // The package as installed: its package.json and dist/ in a folder outside the repository, with
    // its dependencies reachable through node_modules.
    dir = mkdtempSync(path.join(os.tmpdir(), 'keel-installed-'));
    installed = path.join(dir, 'node_modules', 'keel');
    cpSync(path.join(pkgDir, 'dist'), path.join(installed, 'dist'), { recursive: true });
    writeFileSync(path.join(installed, 'package.json'), readFileSync(path.join(pkgDir, 'package.json')));
    symlinkSync(path.join(pkgDir, 'node_modules'), path.join(installed, 'node_modules'), 'dir');
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs the mlp suite’s Keel sides and prints DESIGN.md’s JSON', async () => {
    const r = await run(['bench', 'mlp', '--json', '--device', 'cpu', '--rounds', '1', '--steps', '2'], {
      cwd: dir,
      script: path.join(installed, 'dist', 'cli.js'),
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/not in a Keel checkout: running the mlp suite's Keel sides/);
    const result = JSON.parse(r.stdout) as {
      suite: string;
      machine: { cpus: string; node: string };
      metrics: Record<string, { value: number; unit: string }>;
    };
    expect(result.suite).toBe('mlp');
    expect(result.machine.node).toBe(process.version);
    expect(result.machine.cpus).toMatch(/^\d+ × /);
    for (const name of ['keel_cpu_ms_per_step', 'keel_cpu_ms_per_step_sequential']) {
      expect(result.metrics[name]?.unit).toBe('ms');
      expect(result.metrics[name]?.value).toBeGreaterThan(0);
    }
    expect(result.metrics.loss_step_3_keel_cpu?.value).toBeGreaterThan(0);
    expect(result.metrics.mlp_step_gflop).toEqual({ value: 0.821559, unit: 'GFLOP' });
  });

  it('lists what it can run, and refuses a repository-only suite in one line', async () => {
    const script = path.join(installed, 'dist', 'cli.js');
    const list = await run(['bench', '--list'], { cwd: dir, script });
    expect(list.code).toBe(0);
    expect(list.stdout).toBe('mlp\n');
    const fence = await run(['bench', 'fence'], { cwd: dir, script });
    expect(fence.code).toBe(1);
    expect(fence.stderr).toMatch(/suite 'fence' ships with the Keel repository .* the package runs: mlp/);
    const unknown = await run(['bench', 'nosuch'], { cwd: dir, script });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim()).toMatch(
      /^keel bench: unknown suite 'nosuch' \(the package runs: mlp; a Keel checkout runs: allocator, /,
    );
    expect(unknown.stderr.trim().split('\n')).toHaveLength(1);
  });

  it("names the repository's suites as the repository's runner does (bench/src)", async () => {
    const { REPOSITORY_SUITES } = await import('../../src/cli/bench-packaged');
    const bench = path.resolve(fileURLToPath(new URL('../../../../bench/src', import.meta.url)));
    const sources = [
      ...readdirSync(path.join(bench, 'suites')).map((f) => path.join(bench, 'suites', f)),
      path.join(bench, 'mlp', 'suite.ts'),
    ].filter((f) => f.endsWith('.ts'));
    const names = sources.flatMap((f) =>
      [...readFileSync(f, 'utf8').matchAll(/^\s+name: '([\w-]+)',\n\s+description:/gm)].map((m) => m[1]),
    );
    expect([...new Set(names)].sort()).toEqual([...REPOSITORY_SUITES].sort());
  });
});
