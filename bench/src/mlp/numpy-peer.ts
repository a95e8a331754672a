/**
 * The numpy side of the `mlp` suite: bench/py/mlp_numpy.py in a `python3` child process that stays up
 * for the whole run, so its rounds interleave with Keel's (one `run` command per round, answers as JSON
 * lines). It trains on exactly Keel's data: the reference initial parameters and the same pre-generated
 * batches, written once to a temporary file, so its losses match Keel's step for step.
 *
 * Threads: OpenBLAS (and OpenMP / MKL, should numpy use them) get `threads` threads through the
 * environment, by default one per core: Keel's CPU device runs one worker per core, so both sides use
 * every core of the machine; the suite also runs a one-thread peer for the per-core comparison (CPU
 * time per step, which other processes on a shared machine barely disturb). `openNumpyPeer` resolves `undefined` (with the reason) when `python3` or
 * numpy is absent; the suite then skips the side with that one line.
 */
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { initParams, REFERENCE_DATASET, REFERENCE_MLP, SyntheticDataset } from './keel-mlp.ts';

const SCRIPT = fileURLToPath(new URL('../../py/mlp_numpy.py', import.meta.url));

export interface NumpyRound {
  readonly stepMs: number[];
  /** CPU time of the python process per timed step (every thread). */
  readonly cpuMs: number[];
  readonly losses: number[];
}

export interface NumpyPeer {
  /** "numpy 2.x, scipy-openblas 0.3.x, OPENBLAS_NUM_THREADS=2". */
  readonly description: string;
  run(warmup: number, steps: number): Promise<NumpyRound>;
  close(): void;
}

export type NumpyPeerResult = { peer: NumpyPeer } | { skipped: string };

/** The reference run's parameters and `batches` batches as the script's manifest + raw data file. */
function writeData(dir: string, batches: number): string {
  const config = REFERENCE_MLP;
  const d = config.layers;
  const params = initParams(config);
  const dataset = new SyntheticDataset({ ...REFERENCE_DATASET, inputSize: d[0]!, classes: d[d.length - 1]! });
  const parts: Uint8Array[] = [];
  const bytes = (a: Float32Array | Uint32Array): Uint8Array =>
    new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  for (let i = 0; i < d.length - 1; i++) {
    parts.push(bytes(params.weights[i]!), bytes(params.biases[i]!));
  }
  for (let b = 0; b < batches; b++) {
    const batch = dataset.batch(b, config.batch);
    parts.push(bytes(batch.x), bytes(batch.labels));
  }
  const data = path.join(dir, 'data.bin');
  writeFileSync(data, Buffer.concat(parts));
  const manifest = path.join(dir, 'manifest.json');
  writeFileSync(
    manifest,
    JSON.stringify({ data, layers: d, batch: config.batch, learningRate: config.learningRate, batches }),
  );
  return manifest;
}

/** Starts the peer, or says in one line why it cannot run here. */
export async function openNumpyPeer(
  options: { threads?: number; batches?: number } = {},
): Promise<NumpyPeerResult> {
  const probe = spawnSync('python3', ['-c', 'import numpy; print(numpy.__version__)'], { encoding: 'utf8' });
  if (probe.error !== undefined) return { skipped: `python3 not found (${probe.error.message})` };
  if (probe.status !== 0) return { skipped: 'python3 has no numpy' };
  const threads = options.threads ?? os.cpus().length;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'keel-mlp-numpy-'));
  const manifest = writeData(dir, options.batches ?? 8);
  const n = String(threads);
  const child: ChildProcessWithoutNullStreams = spawn('python3', [SCRIPT, manifest], {
    env: { ...process.env, OPENBLAS_NUM_THREADS: n, OMP_NUM_THREADS: n, MKL_NUM_THREADS: n },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const lines: Interface = createInterface({ input: child.stdout });
  const waiting: ((line: string | undefined) => void)[] = [];
  lines.on('line', (line) => waiting.shift()?.(line));
  child.on('close', () => {
    for (const w of waiting.splice(0)) w(undefined);
  });
  const next = (): Promise<string> =>
    new Promise((resolve, reject) =>
      waiting.push((line) =>
        line === undefined
          ? reject(new Error(`numpy peer exited: ${stderr.trim().slice(-500)}`))
          : resolve(line),
      ),
    );
  const cleanup = (): void => rmSync(dir, { recursive: true, force: true });
  try {
    const ready = JSON.parse(await next()) as { numpy: string; blas: string; threads: string };
    return {
      peer: {
        description: `numpy ${ready.numpy}, ${ready.blas}, OPENBLAS_NUM_THREADS=${ready.threads}`,
        async run(warmup, steps) {
          child.stdin.write(`run ${warmup} ${steps}\n`);
          const r = JSON.parse(await next()) as NumpyRound & { error?: string };
          if (r.error !== undefined) throw new Error(`numpy peer: ${r.error}`);
          return r;
        },
        close() {
          child.stdin.end('quit\n');
          cleanup();
        },
      },
    };
  } catch (error) {
    child.kill();
    cleanup();
    return {
      skipped: `numpy peer failed to start: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}
