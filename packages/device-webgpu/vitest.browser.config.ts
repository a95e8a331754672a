/**
 * Browser project: the same conformance suite in headless Chromium (vitest browser mode, driven by
 * playwright-core with the system Chromium; nothing is downloaded).
 *
 * Chromium exposes WebGPU headless with `--enable-unsafe-webgpu` on a secure origin (vitest serves
 * from localhost); without a GPU it uses SwiftShader. `--no-sandbox` lets it run as root (CI
 * containers). KEEL_CHROMIUM overrides the executable (default /usr/bin/chromium). When no Chromium is
 * found, the project runs one skipped test whose title says why — unless CI is set: then the missing
 * browser fails the run.
 */
import { existsSync } from 'node:fs';
import { playwright } from '@vitest/browser-playwright';
import { defineProject } from 'vitest/config';

const executablePath = process.env.KEEL_CHROMIUM ?? '/usr/bin/chromium';
const found = existsSync(executablePath);
const name = '@keel/device-webgpu-browser';

/** Flags under which headless Chromium exposes WebGPU here (see README § Browser notes). */
export const CHROMIUM_WEBGPU_ARGS = ['--enable-unsafe-webgpu', '--no-sandbox'];

export default found || process.env.CI
  ? defineProject({
      test: {
        name,
        include: ['test/**/*.browser.test.ts'],
        testTimeout: 60_000,
        hookTimeout: 60_000,
        browser: {
          enabled: true,
          headless: true,
          screenshotFailures: false,
          provider: playwright({ launchOptions: { executablePath, args: CHROMIUM_WEBGPU_ARGS } }),
          instances: [{ browser: 'chromium' }],
        },
      },
    })
  : defineProject({
      test: {
        name,
        include: ['test/browser-unavailable.test.ts'],
        env: { KEEL_BROWSER_SKIP_REASON: `no Chromium at ${executablePath} (set KEEL_CHROMIUM)` },
      },
    });
