/**
 * The browser example (examples/browser/index.html) in headless Chromium, driven by playwright-core with
 * the system browser (KEEL_CHROMIUM, default /usr/bin/chromium; nothing is downloaded). The page is
 * served from examples/ over http://localhost (a secure origin, as WebGPU requires) by a small static
 * server. Without Chromium or a WebGPU adapter the test is skipped with the reason, except under CI.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { examplesDir, inCi } from './run-example';

const executablePath = process.env.KEEL_CHROMIUM ?? '/usr/bin/chromium';
const TYPES: Record<string, string> = {
  '.html': 'text/html',
  '.mjs': 'text/javascript',
  '.js': 'text/javascript',
};

let server: Server;
let origin = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname));
    const file = join(examplesDir, path);
    if (!file.startsWith(examplesDir) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
    res.end(readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://localhost:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe('browser example', () => {
  it('index.html runs a WGSL kernel ordered by fences in headless Chromium', async (ctx) => {
    if (!existsSync(executablePath)) {
      if (inCi()) throw new Error(`no Chromium at ${executablePath} (set KEEL_CHROMIUM)`);
      ctx.skip(`no Chromium at ${executablePath} (set KEEL_CHROMIUM)`);
    }
    const browser = await chromium.launch({
      executablePath,
      headless: true,
      args: ['--enable-unsafe-webgpu', '--no-sandbox'],
    });
    try {
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`${origin}/browser/index.html`);
      await page.waitForFunction(() => 'keelExample' in window, undefined, { timeout: 45_000 });
      const result = await page.evaluate(
        () => (window as unknown as { keelExample: { status: string; message: string } }).keelExample,
      );
      if (result.status === 'skipped' && !inCi()) ctx.skip(result.message);
      expect(errors).toEqual([]);
      expect(result.status, result.message).toBe('ok');
      expect(result.message).toMatch(/scaled 256 floats twice .*: data\[255\] = 573\.75/);
      expect(await page.textContent('#result')).toBe(`ok: ${result.message}`);
    } finally {
      await browser.close();
    }
  });
});
