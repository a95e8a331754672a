import { chromium } from 'playwright-core';
import { build, preview } from 'vite';

const configFile = new URL('./vite.config.ts', import.meta.url).pathname;
await build({ configFile, logLevel: 'silent', build: { outDir: '/tmp/pg-dist', emptyOutDir: true } });
const server = await preview({
  configFile,
  logLevel: 'silent',
  build: { outDir: '/tmp/pg-dist' },
  preview: { port: 0 },
});
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--enable-unsafe-webgpu', '--no-sandbox'],
});
const page = await browser.newPage();
page.on('console', (m) => console.log('console:', m.text()));
const t0 = Date.now();
await page.goto(`${server.resolvedUrls.local[0]}?${process.argv[2]}`);
for (let i = 0; i < 40; i++) {
  const s = await page.evaluate(() => [
    document.body.dataset.run,
    ...['webgpu', 'cpu'].map((d) => JSON.stringify(document.getElementById('side-' + d).dataset)),
  ]);
  console.log(((Date.now() - t0) / 1000).toFixed(1), s.join(' '));
  if (s[0] === 'finished') break;
  await new Promise((r) => setTimeout(r, 5000));
}
await page.screenshot({ path: '/tmp/pg.png', fullPage: true });
await browser.close();
await server.close();
