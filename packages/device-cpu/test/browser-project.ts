/**
 * The browser projects of @keel/device-cpu (vitest browser mode in headless Chromium, driven by
 * playwright-core with the system Chromium; nothing is downloaded), as device-webgpu's: KEEL_CHROMIUM
 * overrides the executable (default /usr/bin/chromium); without one the project runs one skipped test
 * whose title says why, unless CI is set, when the missing browser fails the run.
 *
 * `isolated: true` serves every response with COOP `same-origin` and COEP `require-corp`, so that the
 * test page (and the workers it starts) are cross-origin isolated and have SharedArrayBuffer.
 */
import { existsSync } from 'node:fs';
import { playwright } from '@vitest/browser-playwright';
import { defineProject, type UserWorkspaceConfig } from 'vitest/config';

/** The headers that make a page cross-origin isolated (README § Browsers). */
export const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

export function browserProject(name: string, include: string, isolated: boolean): UserWorkspaceConfig {
  const executablePath = process.env.KEEL_CHROMIUM ?? '/usr/bin/chromium';
  if (!existsSync(executablePath) && !process.env.CI) {
    return defineProject({
      test: {
        name,
        include: ['test/browser-unavailable.test.ts'],
        env: { KEEL_BROWSER_SKIP_REASON: `no Chromium at ${executablePath} (set KEEL_CHROMIUM)` },
      },
    });
  }
  const headers = isolated ? ISOLATION_HEADERS : {};
  return defineProject({
    server: { headers },
    preview: { headers },
    test: {
      name,
      include: [include],
      testTimeout: 60_000,
      hookTimeout: 60_000,
      browser: {
        enabled: true,
        headless: true,
        screenshotFailures: false,
        provider: playwright({
          launchOptions: { executablePath, args: ['--enable-unsafe-webgpu', '--no-sandbox'] },
        }),
        instances: [{ browser: 'chromium' }],
      },
    },
  });
}
