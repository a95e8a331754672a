/**
 * The CommonJS Node build (`require('@keel/device-cpu')`) finds its worker script beside itself from an
 * install path with characters a file URL must escape (`#`, `%`, a space): `import.meta.url` in the
 * CommonJS build is `pathToFileURL(__filename)` (scripts/tsup-shims). A copy of the built package is
 * installed into such a directory (its Keel dependencies linked), and a child process runs a task-mode
 * dispatch there (executes run on the workers). Needs the built package (pnpm build).
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const PACKAGES = fileURLToPath(new URL('../..', import.meta.url));

const KERNEL = 'export function seven(ctx) { ctx.bindings[0].u32[ctx.workgroupId[0]] = 7; }\n';

const SCRIPT = `
const { pathToFileURL } = require('node:url');
const { createCpuDevice } = require('@keel/device-cpu');
const { Fence, TimelineSemaphore } = require('@keel/fence');
(async () => {
  const d = createCpuDevice({ mode: 'task', queues: 1, workersPerQueue: 1 });
  const exe = await d.createExecutable({
    format: 'js-module',
    url: pathToFileURL(require('node:path').join(__dirname, 'kernel.mjs')),
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
  await d.destroy();
  console.log('ok ' + out.join(','));
})().catch((e) => { console.log('failed ' + e.message); process.exitCode = 1; });
`;

describe('the CommonJS Node build in an install path with #, % and a space', () => {
  it('runs task mode (the worker script resolves beside index.cjs)', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'keel #%41 dir-'));
    try {
      const scope = path.join(root, 'node_modules', '@keel');
      mkdirSync(scope, { recursive: true });
      for (const dep of ['fence', 'hal', 'allocator', 'command-buffer']) {
        symlinkSync(path.join(PACKAGES, dep), path.join(scope, dep), 'dir');
      }
      // A real copy: __filename must be inside the escaped path (a symlink resolves to the checkout).
      const own = path.join(scope, 'device-cpu');
      mkdirSync(own);
      cpSync(path.join(PACKAGES, 'device-cpu', 'package.json'), path.join(own, 'package.json'));
      cpSync(path.join(PACKAGES, 'device-cpu', 'dist'), path.join(own, 'dist'), { recursive: true });
      writeFileSync(path.join(root, 'kernel.mjs'), KERNEL);
      const script = path.join(root, 'probe.cjs');
      writeFileSync(script, SCRIPT);
      const { stdout } = await run(process.execPath, [script], { cwd: root, timeout: 30_000 }).catch(
        (error: { stdout?: string }) => ({ stdout: error.stdout ?? String(error) }),
      );
      expect(stdout.trim()).toBe('ok 7,7,7,7');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
