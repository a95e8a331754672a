/**
 * The playground (examples/playground) end to end, as a user gets it: a production `vite build` with
 * its own vite.config.ts, served by `vite preview` on a free localhost port (cross-origin isolated by
 * the config's headers), opened in headless Chromium (playwright-core, the system browser: KEEL_CHROMIUM,
 * default /usr/bin/chromium; WebGPU through `--enable-unsafe-webgpu`, SwiftShader without a GPU). The
 * page trains a few steps on WebGPU and on the CPU task device (Web Workers) at once; the test waits
 * (bounded) until both sides finished, asserts the loss fell on each and both reported device info,
 * ms/step and bytes moved, and saves a screenshot to examples/playground/test-results/playground.png
 * (gitignored; CI keeps it as an artifact). The dev server's isolation headers are checked too.
 * Without Chromium the test is skipped with the reason, except under CI, where that is a failure.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { build, createServer, preview } from 'vite';
import { describe, expect, it } from 'vitest';
import { examplesDir, inCi } from './run-example';

const executablePath = process.env.KEEL_CHROMIUM ?? '/usr/bin/chromium';
const root = join(examplesDir, 'playground');
const configFile = join(root, 'vite.config.ts');
const SCREENSHOT = join(root, 'test-results', 'playground.png');
const STEPS = 6;
const BATCH = 32;

interface SideReport {
  readonly state?: string;
  readonly reason?: string;
  readonly backend?: string;
  readonly deviceName?: string;
  readonly queues?: string;
  readonly workers?: string;
  readonly step?: string;
  readonly firstLoss?: string;
  readonly lastLoss?: string;
  readonly msPerStep?: string;
  readonly hostToDevice?: string;
  readonly deviceToHost?: string;
}

function expectTrained(side: SideReport, backend: string): void {
  expect(side.state, side.reason).toBe('done');
  expect(side.backend).toBe(backend);
  expect(side.deviceName).toBeTruthy();
  expect(Number(side.queues)).toBe(2);
  expect(Number(side.step)).toBe(STEPS);
  const first = Number(side.firstLoss);
  const last = Number(side.lastLoss);
  expect(Number.isFinite(first) && Number.isFinite(last)).toBe(true);
  expect(last).toBeLessThan(first);
  expect(Number(side.msPerStep)).toBeGreaterThan(0);
  // Every batch went up, every loss came back, and the parameters crossed once each way.
  expect(Number(side.hostToDevice)).toBeGreaterThan(STEPS * BATCH * 4 * 784);
  expect(Number(side.deviceToHost)).toBeGreaterThan(4 * STEPS);
}

describe('playground', () => {
  it('its dev server is cross-origin isolated', async () => {
    const server = await createServer({ configFile, logLevel: 'silent', server: { port: 0 } });
    await server.listen();
    try {
      const response = await fetch(server.resolvedUrls!.local[0]!);
      expect(response.status).toBe(200);
      expect(response.headers.get('cross-origin-opener-policy')).toBe('same-origin');
      expect(response.headers.get('cross-origin-embedder-policy')).toBe('require-corp');
    } finally {
      await server.close();
    }
  });

  it('trains on WebGPU and on Web Workers side by side in Chromium (vite build + preview)', async (ctx) => {
    if (!existsSync(executablePath)) {
      if (inCi()) throw new Error(`no Chromium at ${executablePath} (set KEEL_CHROMIUM)`);
      ctx.skip(`no Chromium at ${executablePath} (set KEEL_CHROMIUM)`);
    }
    const outDir = mkdtempSync(join(tmpdir(), 'keel-playground-'));
    try {
      await build({ configFile, logLevel: 'silent', build: { outDir, emptyOutDir: true } });
      const server = await preview({
        configFile,
        logLevel: 'silent',
        build: { outDir },
        preview: { port: 0 },
      });
      const browser = await chromium.launch({
        executablePath,
        headless: true,
        args: ['--enable-unsafe-webgpu', '--no-sandbox'],
      });
      try {
        const page = await browser.newPage({ viewport: { width: 1040, height: 820 } });
        const errors: string[] = [];
        page.on('pageerror', (e) => errors.push(e.message));
        const response = await page.goto(
          `${server.resolvedUrls!.local[0]!}?steps=${STEPS}&batch=${BATCH}&workers=2&autostart=1`,
        );
        expect(response?.headers()['cross-origin-embedder-policy']).toBe('require-corp');
        expect(await page.evaluate(() => globalThis.crossOriginIsolated)).toBe(true);
        const finished = await page
          .waitForFunction(() => document.body.dataset.run === 'finished', undefined, { timeout: 40_000 })
          .then(() => true)
          .catch(() => false);
        // The screenshot is taken either way: it shows what each side reached.
        mkdirSync(join(root, 'test-results'), { recursive: true });
        await page.screenshot({ path: SCREENSHOT, fullPage: true });
        const report = (device: string): Promise<SideReport> =>
          page.$eval(`#side-${device}`, (el) => ({ ...(el as HTMLElement).dataset }));
        const [gpu, cpu] = [await report('webgpu'), await report('cpu')];
        expect(finished, `the runs did not finish in 40 s: ${JSON.stringify({ gpu, cpu })}`).toBe(true);
        expect(errors).toEqual([]);
        expectTrained(cpu, 'cpu');
        expect(Number(cpu.workers)).toBe(2 * 2); // `workers=2` per queue, 2 queues
        if (gpu.state === 'unavailable' && !inCi()) ctx.skip(`WebGPU side: ${gpu.reason}`);
        expectTrained(gpu, 'webgpu');
      } finally {
        await browser.close();
        await server.close();
      }
    } finally {
      rmSync(outDir, { recursive: true, force: true });
    }
  });
});
