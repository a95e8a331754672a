/**
 * A bundle that does not carry the CPU kernel module beside it (esbuild does not copy `new URL(...,
 * import.meta.url)` assets): `trainMlp` on the CPU device fails with INVALID_ARGUMENT that says how to
 * provide the module (copy it as kernels/mlp-cpu.js, or `cpuKernelUrl`), the device's error as its
 * cause. The built Node entry is copied alone into a directory of the package (so `@keel/*` still
 * resolve from its node_modules) and run by a child process. Needs the built package (pnpm build).
 * A `cpuKernelUrl` that gives no module: INVALID_ARGUMENT naming the option (trainMlp and
 * trainMlpDataParallel), the device's error as its cause.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { ErrorCode, KeelError } from '@keel/fence';
import { describe, expect, it } from 'vitest';
import { trainMlp, trainMlpDataParallel } from '../../src/index';

const run = promisify(execFile);
const PACKAGE = fileURLToPath(new URL('../..', import.meta.url));

describe('trainMlp from a bundle without its kernel module', () => {
  it('says how to provide the module, the import failure as the cause', async () => {
    const dir = mkdtempSync(path.join(PACKAGE, '.kernel-not-copied-'));
    try {
      const entry = path.join(dir, 'index.node.js');
      copyFileSync(path.join(PACKAGE, 'dist', 'index.node.js'), entry);
      const program = `
        const { trainMlp } = await import(${JSON.stringify(pathToFileURL(entry).href)});
        try {
          await trainMlp({ device: 'cpu', cpuMode: 'sync', steps: 1, batch: 8 });
          console.log(JSON.stringify({ ok: true }));
        } catch (e) {
          console.log(JSON.stringify({ code: e.code, message: e.message, cause: e.cause?.code }));
        }`;
      const { stdout } = await run(process.execPath, ['--input-type=module', '-e', program], {
        cwd: PACKAGE,
        timeout: 30_000,
      });
      const result = JSON.parse(stdout.trim()) as { code?: string; message?: string; cause?: string };
      expect(result.code).toBe('INVALID_ARGUMENT');
      expect(result.cause).toBe('INVALID_ARGUMENT');
      expect(result.message).toMatch(
        /^trainMlp: the MLP's CPU kernel module did not load from file:.*kernels\/mlp-cpu\.js/,
      );
      expect(result.message).toMatch(
        /copied beside the bundle as kernels\/mlp-cpu\.js, or its URL given as cpuKernelUrl/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a cpuKernelUrl that gives no module', () => {
  it.each([
    [
      'trainMlp',
      (url: URL) => trainMlp({ device: 'cpu', cpuMode: 'sync', steps: 1, batch: 8, cpuKernelUrl: url }),
    ],
    [
      'trainMlpDataParallel',
      (url: URL) => trainMlpDataParallel({ devices: 'cpu', steps: 1, batch: 8, cpuKernelUrl: url }),
    ],
  ])('%s names the option, the device error as the cause', async (what, train) => {
    const url = new URL('./no-such-dir/mlp-cpu.js', import.meta.url);
    const error = await train(url).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(KeelError.is(error, ErrorCode.INVALID_ARGUMENT)).toBe(true);
    const e = error as KeelError;
    expect(e.message).toMatch(
      new RegExp(`^${what}: option 'cpuKernelUrl' \\(file:.*no-such-dir/mlp-cpu\\.js\\)`),
    );
    expect(KeelError.is(e.cause, ErrorCode.INVALID_ARGUMENT)).toBe(true);
  });
});
