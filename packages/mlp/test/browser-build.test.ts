/**
 * The built package for browsers: `dist/index.js` (the `browser` and `default` conditions of `exports`,
 * and what `module` names) holds no Node built-ins (its platform layer uses
 * `navigator.hardwareConcurrency`), so the file itself bundles for the browser, and it finds the CPU
 * kernel module with a literal `new URL('./kernels/mlp-cpu.js', import.meta.url)` that bundlers copy.
 * The Node build (`dist/index.node.js`, the `node` condition, beside it so the same URL finds the
 * kernels) keeps the `node:` prefix on its built-ins. Reads the build output (`pnpm build`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { hardwareConcurrency } from '../src/platform/cores.browser';

const dist = new URL('../dist/', import.meta.url);
const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  exports: Record<string, Record<string, Record<string, { default: string }>>>;
};

describe('@keel/mlp browser build', () => {
  it('is the browser condition of the package exports', () => {
    expect(manifest.exports['.']?.browser?.import?.default).toBe('./dist/index.js');
    expect(manifest.exports['.']?.default?.import?.default).toBe('./dist/index.js');
    expect(manifest.exports['.']?.node?.import?.default).toBe('./dist/index.node.js');
    expect(Object.keys(manifest.exports['.'] ?? {})[0]).toBe('browser');
  });

  it('imports no Node built-ins and finds its kernel module by a literal URL', () => {
    const text = readFileSync(new URL('index.js', dist), 'utf8');
    expect(text).not.toMatch(/from\s*["'](?:node:|os["']|worker_threads)/);
    expect(text).toContain('new URL("./kernels/mlp-cpu.js", import.meta.url)');
    expect(existsSync(new URL('kernels/mlp-cpu.js', dist))).toBe(true);
  });

  it('ships a self-contained kernel module: no import a copied asset could not resolve', () => {
    // Bundlers copy dist/kernels/mlp-cpu.js as an asset (it is loaded by URL in the device's workers),
    // so a bare specifier left in it ('@keel/hal') fails in the browser: "Failed to resolve module
    // specifier". Every import it has must be gone.
    const text = readFileSync(new URL('kernels/mlp-cpu.js', dist), 'utf8');
    expect(text).not.toMatch(/^\s*import\b|\bfrom\s*["']|\bimport\s*\(/m);
  });

  it('bundles as a file for the browser (esbuild --bundle --platform=browser), with no Node built-ins', async () => {
    const result = await build({
      entryPoints: [fileURLToPath(new URL('index.js', dist))],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      logLevel: 'silent',
    });
    const text = result.outputFiles[0]?.text ?? '';
    expect(text).not.toMatch(/["'](?:node:[\w/]+|os|worker_threads)["']/);
    expect(text).toContain('new URL("./kernels/mlp-cpu.js", import.meta.url)');
  });

  it('keeps the node: prefix on Node built-ins in the Node build, beside the kernels', () => {
    const text = readFileSync(new URL('index.node.js', dist), 'utf8');
    expect(text).toMatch(/from\s*["']node:os["']/);
    expect(text).not.toMatch(/from\s*["']os["']/);
    expect(text).toContain('new URL("./kernels/mlp-cpu.js", import.meta.url)');
  });

  it('takes the core count from navigator.hardwareConcurrency in browsers (1 where absent)', () => {
    const expected = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator
      ?.hardwareConcurrency;
    expect(hardwareConcurrency()).toBe(typeof expected === 'number' && expected >= 1 ? expected : 1);
  });
});
