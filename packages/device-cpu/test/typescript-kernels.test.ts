/**
 * Kernels written in TypeScript (README § Kernels written in TypeScript). Task-mode workers do not
 * share the main thread's loader hooks (tsx registers its hooks on the main thread only on Node 20),
 * so the recipe is a JavaScript module that loads the TypeScript file with tsx's `tsImport`
 * (fixtures/ts-kernels.mjs): checked in both modes here, and end to end as a user runs it,
 * `node --import tsx program.ts`. A `.ts` URL given directly either loads (a Node that strips types
 * in workers) or fails with INVALID_ARGUMENT whose message says what to do.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Fence, KeelError } from '@keel/fence';
import { BufferUsage, QueueAffinity } from '@keel/hal';
import { describe, expect, it } from 'vitest';
import { type CpuDevice, type CpuDeviceMode, createCpuDevice } from '../dist/node/index.js';

const EXPECTED = [100, 103, 106, 109, 112, 115, 118, 121];
const EXPORTS = [{ name: 'iota3', bindingCount: 1, constantCount: 1 }];

async function runIota3(device: CpuDevice, url: URL): Promise<number[]> {
  const exe = await device.createExecutable({ format: 'js-module', url, exports: EXPORTS });
  const out = device.createBuffer({ byteLength: 32, usage: BufferUsage.DEFAULT });
  const cb = device.createCommandBuffer();
  cb.begin();
  cb.dispatch(exe, 'iota3', { workgroupCount: [8, 1, 1], constants: [100], bindings: [{ buffer: out }] });
  cb.end();
  const s = device.createSemaphore(0);
  device.queueExecute(QueueAffinity.ANY, Fence.empty, Fence.of({ semaphore: s, value: 1 }), [cb]);
  const result = new Uint32Array(8);
  device.queueRead(
    QueueAffinity.ANY,
    Fence.of({ semaphore: s, value: 1 }),
    Fence.of({ semaphore: s, value: 2 }),
    { buffer: out },
    result,
  );
  await s.wait(2, { timeoutMs: 20_000 });
  return Array.from(result);
}

describe('TypeScript kernels through a tsImport module', () => {
  for (const mode of ['sync', 'task'] as CpuDeviceMode[]) {
    it(`run in ${mode} mode`, async () => {
      const device = createCpuDevice({ mode, queues: 1, workersPerQueue: 2 });
      try {
        expect(await runIota3(device, new URL('./fixtures/ts-kernels.mjs', import.meta.url))).toEqual(
          EXPECTED,
        );
      } finally {
        await device.destroy();
      }
    });
  }

  it('run in task mode under `node --import tsx program.ts`', async () => {
    const program = fileURLToPath(new URL('./fixtures/ts-main.ts', import.meta.url));
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', program], {
      timeout: 60_000,
    });
    expect(JSON.parse(stdout.trim())).toEqual({ mode: 'task', workers: 2, result: EXPECTED });
  });
});

it('a .ts kernel URL in task mode either loads or fails saying what to do', async () => {
  const device = createCpuDevice({ mode: 'task', queues: 1, workersPerQueue: 1 });
  try {
    const result = await runIota3(device, new URL('./fixtures/ts-kernels.ts', import.meta.url)).catch(
      (error: unknown) => error,
    );
    if (Array.isArray(result)) {
      expect(result).toEqual(EXPECTED);
      return;
    }
    expect(KeelError.is(result)).toBe(true);
    const error = result as KeelError;
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toContain('Unknown file extension ".ts"');
    expect(error.message).toContain('tsImport');
    expect(error.message).toContain('Kernels written in TypeScript');
  } finally {
    await device.destroy();
  }
});
