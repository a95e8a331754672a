/**
 * The workload of the 'scheduler' benchmark: independent chains of matmul dispatches, each link
 * X_{k+1} = X_k × W_chain, submitted through a Scheduler with nothing but fences to order them.
 */
import { Fence, type Semaphore } from '@keel/fence';
import { type Buffer, BufferUsage, type Device, type Executable } from '@keel/hal';
import type { Scheduler } from '@keel/scheduler';

/** Rows of C one workgroup computes. */
const ROWS_PER_WORKGROUP = 16;

export const MATMUL_URL = new URL('./matmul-kernel.js', import.meta.url);

export function matmulExecutable(device: Device): Promise<Executable> {
  return device.createExecutable({
    format: 'js-module',
    url: MATMUL_URL,
    label: 'matmul',
    exports: [
      { name: 'matmul', bindingCount: 3, constantCount: 1, workgroupSize: [ROWS_PER_WORKGROUP, 1, 1] },
    ],
  });
}

/** The buffers of `chains` chains of n×n matrices on one device: X ping-pong pair and W per chain. */
export interface ChainBuffers {
  readonly device: Device;
  readonly executable: Executable;
  readonly n: number;
  readonly x: readonly (readonly [Buffer, Buffer])[];
  readonly w: readonly Buffer[];
}

/** Deterministic values in [-1, 1) scaled by `scale`. */
function values(count: number, seed: number, scale: number): Float32Array {
  const out = new Float32Array(count);
  let s = seed >>> 0;
  for (let i = 0; i < count; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = ((s / 2 ** 32) * 2 - 1) * scale;
  }
  return out;
}

export async function createChainBuffers(device: Device, chains: number, n: number): Promise<ChainBuffers> {
  const usage = BufferUsage.DISPATCH_STORAGE | BufferUsage.TRANSFER_TARGET | BufferUsage.TRANSFER_SOURCE;
  const bytes = n * n * 4;
  const executable = await matmulExecutable(device);
  const x: [Buffer, Buffer][] = [];
  const w: Buffer[] = [];
  const uploads: Promise<void>[] = [];
  for (let c = 0; c < chains; c++) {
    const pair: [Buffer, Buffer] = [
      device.createBuffer({ usage, byteLength: bytes, label: `x${c}a` }),
      device.createBuffer({ usage, byteLength: bytes, label: `x${c}b` }),
    ];
    const weights = device.createBuffer({ usage, byteLength: bytes, label: `w${c}` });
    for (const [buffer, data] of [
      [pair[0], values(n * n, 1 + c, 1)],
      [weights, values(n * n, 100 + c, 1 / Math.sqrt(n))],
    ] as const) {
      const semaphore = device.createSemaphore(0);
      device.queueWrite(1, Fence.empty, Fence.of({ semaphore, value: 1 }), data, { buffer });
      uploads.push(semaphore.wait(1));
    }
    x.push(pair);
    w.push(weights);
  }
  await Promise.all(uploads);
  return { device, executable, n, x, w };
}

/**
 * Submits `length` links of every chain through `scheduler` (chains interleaved, as a program would
 * issue them) and resolves once every chain finished. Chain c's links wait only on chain c's previous
 * link, so chains may run concurrently on different targets.
 */
export async function runChains(scheduler: Scheduler, buffers: ChainBuffers, length: number): Promise<void> {
  const { device, executable, n } = buffers;
  const semaphores: Semaphore[] = buffers.x.map(() => device.createSemaphore(0));
  for (let k = 0; k < length; k++) {
    for (let c = 0; c < semaphores.length; c++) {
      const semaphore = semaphores[c]!;
      const pair = buffers.x[c]!;
      const cb = device.createCommandBuffer({ mode: 'one-shot' });
      cb.begin();
      cb.dispatch(executable, 'matmul', {
        workload: [n, 1, 1],
        constants: [n],
        bindings: [{ buffer: pair[k % 2]! }, { buffer: buffers.w[c]! }, { buffer: pair[(k + 1) % 2]! }],
      });
      cb.end();
      scheduler.submit(
        { kind: 'execute', commandBuffers: [cb] },
        {
          wait: k === 0 ? Fence.empty : Fence.of({ semaphore, value: k }),
          signalFence: Fence.of({ semaphore, value: k + 1 }),
        },
      );
    }
  }
  await Promise.all(semaphores.map((s) => s.wait(length, { timeoutMs: 120_000 })));
}
