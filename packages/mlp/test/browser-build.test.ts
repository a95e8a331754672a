/**
 * The built package for browsers: `dist/index.browser.js` (the `browser` condition of `exports`) holds
 * no Node built-ins (its platform layer uses `navigator.hardwareConcurrency`), and it finds the CPU
 * kernel module with a literal `new URL('./kernels/mlp-cpu.js', import.meta.url)` that bundlers copy.
 * The Node build keeps the `node:` prefix on its built-ins. Reads the build output (`pnpm build`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { hardwareConcurrency } from '../src/platform/cores.browser';

const dist = new URL('../dist/', import.meta.url);
const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  exports: Record<string, Record<string, { default: string }>>;
};

describe('@keel/mlp browser build', () => {
  it('is the browser condition of the package exports', () => {
    expect(manifest.exports['.']?.browser?.default).toBe('./dist/index.browser.js');
    expect(Object.keys(manifest.exports['.'] ?? {})[0]).toBe('browser');
  });

  it('imports no Node built-ins and finds its kernel module by a literal URL', () => {
    const text = readFileSync(new URL('index.browser.js', dist), 'utf8');
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

  it('keeps the node: prefix on Node built-ins in the Node build', () => {
    const text = readFileSync(new URL('index.js', dist), 'utf8');
    expect(text).toMatch(/from\s*["']node:os["']/);
    expect(text).not.toMatch(/from\s*["']os["']/);
  });

  it('takes the core count from navigator.hardwareConcurrency in browsers (1 where absent)', () => {
    const expected = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator
      ?.hardwareConcurrency;
    expect(hardwareConcurrency()).toBe(typeof expected === 'number' && expected >= 1 ? expected : 1);
  });
});
