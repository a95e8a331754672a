/**
 * The PyTorch peer of the `mlp` suite (DESIGN.md § Peers measured by the benchmarks), for the GPU
 * machine's entry: runs bench/py/mlp_torch.py with `python3` (the GPU machine's python has torch with
 * CUDA; it has no Node) and turns its JSON into metrics: torch_eager_ms, torch_cudagraph_ms and, given
 * Keel's WebGPU ms/step of the same run, keel_webgpu_vs_torch_eager and keel_webgpu_vs_torch_cudagraph
 * (Keel ms / PyTorch ms: below 1 means Keel is faster). Where python3, torch or CUDA is missing the
 * peer is skipped with a one-line reason and no metric.
 *
 * The script travels as a tracked file of the repository, not inside the bundle: `findTorchScript`
 * looks for bench/py/mlp_torch.py upwards from the working directory and from the running module
 * (`.device/entry.mjs` in the bundle, bench/src/mlp/ from sources), so it is found from the repo root
 * and from `.device/` alike.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Metrics, metric } from '../harness.ts';

export const TORCH_SCRIPT = path.join('bench', 'py', 'mlp_torch.py');

/** bench/py/mlp_torch.py found upwards from each of `starts` (first match), or undefined. */
export function findTorchScript(
  starts: readonly string[] = [process.cwd(), path.dirname(fileURLToPath(import.meta.url))],
): string | undefined {
  for (const start of starts) {
    let dir = path.resolve(start);
    for (;;) {
      const candidate = path.join(dir, TORCH_SCRIPT);
      if (existsSync(candidate)) return candidate;
      const up = path.dirname(dir);
      if (up === dir) break;
      dir = up;
    }
  }
  return undefined;
}

/** What mlp_torch.py prints (one JSON object). */
export interface TorchResult {
  readonly skipped?: string;
  readonly torch?: string;
  readonly device?: string;
  readonly eager_ms?: number;
  readonly cudagraph_ms?: number;
  readonly cudagraph_error?: string;
  readonly loss_step_3?: number | null;
}

export interface TorchRunOptions {
  readonly steps?: number;
  readonly rounds?: number;
  readonly device?: 'cuda' | 'cpu';
  readonly python?: string;
  readonly timeoutMs?: number;
  readonly log?: (line: string) => void;
}

/**
 * Runs the script; resolves its result, or `{ skipped }` with a one-line reason when python3 cannot
 * run, the script is missing, fails or prints no JSON. Never rejects.
 */
export function runTorchPeer(options: TorchRunOptions = {}): Promise<TorchResult> {
  const script = findTorchScript();
  if (script === undefined) {
    return Promise.resolve({ skipped: `${TORCH_SCRIPT} not found from ${process.cwd()}` });
  }
  const args = [
    script,
    '--steps',
    String(options.steps ?? 50),
    '--rounds',
    String(options.rounds ?? 3),
    '--device',
    options.device ?? 'cuda',
  ];
  const python = options.python ?? 'python3';
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    let settled = false;
    const done = (result: TorchResult): void => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    const child = spawn(python, args, { timeout: options.timeoutMs ?? 300_000 });
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      const text = d.toString();
      stderr += text;
      for (const line of text.split('\n')) if (line.trim() !== '') options.log?.(line);
    });
    child.on('error', (error) => done({ skipped: `cannot run ${python}: ${error.message}` }));
    child.on('close', (code, signal) => {
      const last = stdout.trim().split('\n').at(-1) ?? '';
      try {
        done(JSON.parse(last) as TorchResult);
      } catch {
        const why = signal !== null ? `killed by ${signal}` : `exit code ${code}`;
        const tail = stderr.trim().split('\n').at(-1) ?? '';
        done({ skipped: `${path.basename(script)} printed no result (${why}${tail ? `: ${tail}` : ''})` });
      }
    });
  });
}

/** The peer's metrics, with the ratios against Keel's WebGPU ms/step of the same run (if given). */
export function torchMetrics(result: TorchResult, keelWebGpuMs: number | undefined): Metrics {
  const metrics: Metrics = {};
  const ratio = (ms: number | undefined): number | undefined =>
    ms !== undefined && keelWebGpuMs !== undefined && ms > 0 ? keelWebGpuMs / ms : undefined;
  if (result.eager_ms !== undefined) {
    metrics.torch_eager_ms = metric(result.eager_ms, 'ms');
    const r = ratio(result.eager_ms);
    if (r !== undefined) metrics.keel_webgpu_vs_torch_eager = metric(r, '×');
  }
  if (result.cudagraph_ms !== undefined) {
    metrics.torch_cudagraph_ms = metric(result.cudagraph_ms, 'ms');
    const r = ratio(result.cudagraph_ms);
    if (r !== undefined) metrics.keel_webgpu_vs_torch_cudagraph = metric(r, '×');
  }
  return metrics;
}
