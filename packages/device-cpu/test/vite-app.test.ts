/**
 * A user's Vite app, as a user builds it: production `vite build` with Vite's defaults (no worker or
 * resolve settings), served cross-origin isolated by `vite preview`, opened in headless Chromium
 * (playwright-core, the system Chromium). Importing `@keel/device-cpu` by name picks the browser build,
 * Vite bundles the worker from the `new Worker(new URL('./worker.js', import.meta.url), ...)` pattern
 * with nothing to configure, no Node built-in reaches the output, and the page runs a kernel in task
 * mode on two Web Workers. Skipped without Chromium unless CI is set (then the missing browser fails).
 */
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { build, preview } from 'vite';
import { expect, it } from 'vitest';

const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));
const CHROMIUM = process.env.KEEL_CHROMIUM ?? '/usr/bin/chromium';
const HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

const MAIN = `
import { createCpuDevice } from '@keel/device-cpu';
import { Fence } from '@keel/fence';
import { BufferUsage, QueueAffinity } from '@keel/hal';

const device = createCpuDevice({ queues: 1, workersPerQueue: 2 });
const exe = await device.createExecutable({
  format: 'js-module',
  url: new URL('/kernels.js', location.href),
  exports: [{ name: 'abs', bindingCount: 2, constantCount: 1 }],
});
const n = 256;
const input = device.createBuffer({ byteLength: 4 * n, usage: BufferUsage.DEFAULT });
const output = device.createBuffer({ byteLength: 4 * n, usage: BufferUsage.DEFAULT });
const s = device.createSemaphore(0);
const at = (value) => Fence.of({ semaphore: s, value });
device.queueWrite(QueueAffinity.ANY, Fence.empty, at(1), new Float32Array(n).map((_, i) => -i), { buffer: input });
const cb = device.createCommandBuffer();
cb.begin();
cb.dispatch(exe, 'abs', { workgroupCount: [4, 1, 1], constants: [n], bindings: [{ buffer: input }, { buffer: output }] });
cb.end();
device.queueExecute(QueueAffinity.ANY, at(1), at(2), [cb]);
const result = new Float32Array(n);
device.queueRead(QueueAffinity.ANY, at(2), at(3), { buffer: output }, result);
await s.wait(3, { timeoutMs: 20000 });
document.title = JSON.stringify({ mode: device.mode, workers: device.liveWorkers, sum: result.reduce((a, b) => a + b, 0) });
await device.destroy();
`;

/** A scratch app whose node_modules links the workspace packages, as an install would. */
function scaffold(): string {
  const root = mkdtempSync(join(tmpdir(), 'keel-vite-app-'));
  mkdirSync(join(root, 'src'));
  mkdirSync(join(root, 'public'));
  mkdirSync(join(root, 'node_modules', '@keel'), { recursive: true });
  writeFileSync(
    join(root, 'index.html'),
    '<!doctype html><script type="module" src="/src/main.js"></script>\n',
  );
  writeFileSync(join(root, 'src', 'main.js'), MAIN);
  cpSync(join(PACKAGE_DIR, 'test', 'fixtures', 'cts-kernels.js'), join(root, 'public', 'kernels.js'));
  symlinkSync(PACKAGE_DIR, join(root, 'node_modules', '@keel', 'device-cpu'), 'dir');
  for (const dep of ['fence', 'hal']) {
    symlinkSync(
      join(PACKAGE_DIR, 'node_modules', '@keel', dep),
      join(root, 'node_modules', '@keel', dep),
      'dir',
    );
  }
  return root;
}

it.skipIf(!existsSync(CHROMIUM) && !process.env.CI)(
  'a Vite app runs task mode on Web Workers with default settings',
  async () => {
    const root = scaffold();
    try {
      await build({ root, configFile: false, logLevel: 'silent', build: { target: 'es2022' } });
      const assets = join(root, 'dist', 'assets');
      const files = readdirSync(assets);
      expect(files.some((file) => file.startsWith('worker-'))).toBe(true);
      for (const file of files) {
        expect(readFileSync(join(assets, file), 'utf8')).not.toMatch(/\bnode:[a-z_]+|worker_threads/);
      }
      const server = await preview({
        root,
        configFile: false,
        logLevel: 'silent',
        preview: { port: 0, headers: HEADERS },
      });
      const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
      try {
        const page = await browser.newPage();
        const errors: string[] = [];
        page.on('pageerror', (error) => errors.push(error.message));
        await page.goto(server.resolvedUrls!.local[0]!);
        await page.waitForFunction(() => document.title !== '', null, { timeout: 30_000 });
        expect(errors).toEqual([]);
        expect(await page.evaluate(() => globalThis.crossOriginIsolated)).toBe(true);
        const sum = (255 * 256) / 2;
        expect(JSON.parse(await page.title())).toEqual({ mode: 'task', workers: 2, sum });
      } finally {
        await browser.close();
        await server.close();
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  },
  90_000,
);
