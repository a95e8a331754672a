/**
 * The playground (examples/playground) end to end, as a user gets it: a production `vite build` with its
 * own vite.config.ts, served by `vite preview` on a free localhost port (cross-origin isolated by the
 * config's headers), opened in headless Chromium (playwright-core, the system browser: KEEL_CHROMIUM,
 * default /usr/bin/chromium; WebGPU through `--enable-unsafe-webgpu`, SwiftShader without a GPU). The
 * page trains a few steps on WebGPU and on the CPU task device (Web Workers) at once; the test waits
 * (bounded) until both sides finished, asserts the loss fell on each and both reported device info,
 * ms/step and bytes moved, and saves a screenshot to examples/playground/test-results/playground.png
 * (gitignored; `.ci/run` names it for CI to keep as an artifact). The dev server's isolation headers are
 * checked too. The dev server's page trains too. Stop is pressed in a long run (both sides end
 * 'stopped'), and a page served without the isolation headers shows why its CPU side cannot run. Without
 * Chromium the tests are skipped with the reason, except under CI, where that is a failure.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { build, createServer, type PreviewServer, preview } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
});

const found = existsSync(executablePath);
const skipReason = found ? '' : ` (no Chromium at ${executablePath}; set KEEL_CHROMIUM)`;

describe.skipIf(!found && !inCi())(`playground in Chromium${skipReason}`, () => {
  let outDir = '';
  let server: PreviewServer | undefined;
  let browser: Browser | undefined;
  let url = '';

  beforeAll(async () => {
    if (!existsSync(executablePath)) throw new Error(`no Chromium at ${executablePath} (set KEEL_CHROMIUM)`);
    outDir = mkdtempSync(join(tmpdir(), 'keel-playground-'));
    await build({ configFile, logLevel: 'silent', build: { outDir, emptyOutDir: true } });
    server = await preview({ configFile, logLevel: 'silent', build: { outDir }, preview: { port: 0 } });
    url = server.resolvedUrls!.local[0]!;
    browser = await chromium.launch({
      executablePath,
      headless: true,
      args: ['--enable-unsafe-webgpu', '--no-sandbox'],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (outDir !== '') rmSync(outDir, { recursive: true, force: true });
  });

  /** A page of the playground that records uncaught errors. */
  async function open(): Promise<{ page: Page; errors: string[] }> {
    const page = await browser!.newPage({ viewport: { width: 1040, height: 820 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    return { page, errors };
  }

  const report = (page: Page, device: string): Promise<SideReport> =>
    page.$eval(`#side-${device}`, (el) => ({ ...(el as HTMLElement).dataset }));

  /** Waits (bounded) until both runs ended; false on timeout. */
  const finished = (page: Page, timeout: number): Promise<boolean> =>
    page
      .waitForFunction(() => document.body.dataset.run === 'finished', undefined, { timeout })
      .then(() => true)
      .catch(() => false);

  it('trains on WebGPU and on Web Workers side by side (vite build + preview)', async (ctx) => {
    const { page, errors } = await open();
    const response = await page.goto(`${url}?steps=${STEPS}&batch=${BATCH}&workers=2&autostart=1`);
    expect(response?.headers()['cross-origin-embedder-policy']).toBe('require-corp');
    expect(await page.evaluate(() => globalThis.crossOriginIsolated)).toBe(true);
    const done = await finished(page, 40_000);
    // The screenshot is taken either way: it shows what each side reached.
    mkdirSync(join(root, 'test-results'), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    const [gpu, cpu] = [await report(page, 'webgpu'), await report(page, 'cpu')];
    expect(done, `the runs did not finish in 40 s: ${JSON.stringify({ gpu, cpu })}`).toBe(true);
    expect(errors).toEqual([]);
    expectTrained(cpu, 'cpu');
    expect(Number(cpu.workers)).toBe(2 * 2); // `workers=2` per queue, 2 queues
    if (gpu.state === 'unavailable' && !inCi()) ctx.skip(`WebGPU side: ${gpu.reason}`);
    expectTrained(gpu, 'webgpu');
  });

  it('Stop aborts both runs at a step boundary', async () => {
    const { page, errors } = await open();
    await page.goto(`${url}?steps=100000&batch=${BATCH}&workers=1&autostart=1`);
    // Stop once the CPU side trained a few steps (the WebGPU side may still be compiling or training).
    await page.waitForFunction(
      () => Number(document.getElementById('side-cpu')?.dataset.step) >= 3,
      undefined,
      {
        timeout: 30_000,
      },
    );
    await page.click('#stop');
    const done = await finished(page, 30_000);
    mkdirSync(join(root, 'test-results'), { recursive: true });
    await page.screenshot({ path: join(root, 'test-results', 'playground-stopped.png'), fullPage: true });
    const [gpu, cpu] = [await report(page, 'webgpu'), await report(page, 'cpu')];
    expect(done, JSON.stringify({ gpu, cpu })).toBe(true);
    expect(errors).toEqual([]);
    expect(cpu.state).toBe('stopped');
    expect(cpu.reason).toMatch(/trainMlp: the run was aborted through its abortSignal after step \d+/);
    expect(Number(cpu.step)).toBeLessThan(100000);
    if (gpu.state !== 'unavailable') expect(gpu.state).toBe('stopped');
    expect(await page.isEnabled('#start')).toBe(true);
  });

  it('trains on both sides from the dev server too (vite, no build)', async () => {
    const dev = await createServer({ configFile, logLevel: 'silent', server: { port: 0 } });
    await dev.listen();
    try {
      const { page, errors } = await open();
      await page.goto(`${dev.resolvedUrls!.local[0]!}?steps=${STEPS}&batch=${BATCH}&workers=1&autostart=1`);
      expect(await page.evaluate(() => globalThis.crossOriginIsolated)).toBe(true);
      const done = await finished(page, 40_000);
      const [gpu, cpu] = [await report(page, 'webgpu'), await report(page, 'cpu')];
      expect(done, JSON.stringify({ gpu, cpu })).toBe(true);
      expect(errors).toEqual([]);
      expectTrained(cpu, 'cpu');
      if (gpu.state !== 'unavailable' || inCi()) expectTrained(gpu, 'webgpu');
    } finally {
      await dev.close();
    }
  });

  it('without the isolation headers the CPU side says why it cannot run', async () => {
    const { page, errors } = await open();
    // Serve the same build with COOP/COEP stripped: the page is then not cross-origin isolated.
    await page.route('**/*', async (route) => {
      const response = await route.fetch();
      const headers = { ...response.headers() };
      delete headers['cross-origin-opener-policy'];
      delete headers['cross-origin-embedder-policy'];
      await route.fulfill({ response, headers });
    });
    await page.goto(`${url}?steps=1&batch=${BATCH}&autostart=1`);
    expect(await page.evaluate(() => globalThis.crossOriginIsolated)).toBe(false);
    await page.waitForFunction(
      () => document.getElementById('side-cpu')?.dataset.state === 'unavailable',
      undefined,
      {
        timeout: 30_000,
      },
    );
    const cpu = await report(page, 'cpu');
    expect(cpu.reason).toMatch(/not cross-origin isolated.*Cross-Origin-Opener-Policy: same-origin/);
    expect(await page.textContent('#side-cpu .reason')).toBe(cpu.reason);
    expect(await page.textContent('#isolation')).toMatch(/not cross-origin isolated/);
    await finished(page, 30_000);
    await page.screenshot({
      path: join(root, 'test-results', 'playground-not-isolated.png'),
      fullPage: true,
    });
    expect(errors).toEqual([]);
  });
});
