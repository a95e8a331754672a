/**
 * Task mode from a program Node reads as a string (`node --input-type=module -e …`, or on stdin): its
 * workers start without `--input-type`, which Node passes to workers by default but refuses there.
 * Child processes run a task-mode dispatch (executes run on the workers). Needs the built package.
 */
import { execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const KERNEL = fileURLToPath(new URL('./fixtures/seven.mjs', import.meta.url));
const PACKAGE = fileURLToPath(new URL('..', import.meta.url));

const PROGRAM = `
import { createCpuDevice } from '@keel/device-cpu';
import { Fence, TimelineSemaphore } from '@keel/fence';
import { pathToFileURL } from 'node:url';
const d = createCpuDevice({ mode: 'task', queues: 1, workersPerQueue: 2 });
try {
  const exe = await d.createExecutable({
    format: 'js-module',
    url: pathToFileURL(${JSON.stringify(KERNEL)}),
    exports: [{ name: 'seven', bindingCount: 1, constantCount: 0 }],
  });
  const b = d.createBuffer({ byteLength: 16, usage: 0x3f });
  const cb = d.createCommandBuffer();
  cb.begin();
  cb.dispatch(exe, 'seven', { workgroupCount: [4, 1, 1], bindings: [{ buffer: b }] });
  cb.end();
  const s = new TimelineSemaphore();
  d.queueExecute(1, Fence.empty, Fence.of({ semaphore: s, value: 1 }), [cb]);
  const out = new Uint32Array(4);
  d.queueRead(1, Fence.of({ semaphore: s, value: 1 }), Fence.of({ semaphore: s, value: 2 }), { buffer: b }, out);
  await s.wait(2, { timeoutMs: 10000 });
  console.log('ok ' + out.join(','));
} catch (e) {
  console.log('failed ' + e.message);
} finally {
  await d.destroy();
}
`;

describe('task mode in a program given to Node as a string', () => {
  it('runs with --input-type=module -e', async () => {
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', PROGRAM], {
      cwd: PACKAGE,
      timeout: 30_000,
    });
    expect(stdout.trim()).toBe('ok 7,7,7,7');
  });

  it('runs with --input-type module, the program on stdin', async () => {
    const child = spawn(process.execPath, ['--input-type', 'module'], { cwd: PACKAGE, timeout: 30_000 });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stdin.end(PROGRAM);
    await new Promise((resolve) => child.on('close', resolve));
    expect(stdout.trim()).toBe('ok 7,7,7,7');
  });
});
