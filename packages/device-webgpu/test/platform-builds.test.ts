/**
 * The package's two builds (tsup.config.ts; run `pnpm build` first): dist/index.js, for browsers and
 * bundlers, has no Dawn loading (navigator.gpu is its only WebGPU); dist/index.node.js, the `node`
 * condition, loads the optional `webgpu` package where there is no navigator.gpu.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const dist = new URL('../dist/', import.meta.url);
const read = (file: string) => readFileSync(new URL(file, dist), 'utf8');

interface Built {
  createWebGpuDevice(): Promise<unknown>;
  listWebGpuAdapters(): Promise<unknown[]>;
}

describe('platform builds', () => {
  it('the browser build holds no Dawn loading, the Node build does', () => {
    for (const file of ['index.js', 'index.cjs']) {
      const text = read(file);
      expect(text).not.toContain("optional 'webgpu' package");
      expect(text).not.toMatch(/\bimport\s*\(/);
    }
    for (const file of ['index.node.js', 'index.node.cjs']) {
      expect(read(file)).toContain("optional 'webgpu' package");
    }
  });

  it('the browser build without navigator.gpu: createWebGpuDevice is UNAVAILABLE, no adapters listed', async () => {
    expect((globalThis as { navigator?: { gpu?: unknown } }).navigator?.gpu).toBeUndefined();
    const browser = (await import(new URL('index.js', dist).href)) as Built;
    await expect(browser.createWebGpuDevice()).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: 'createWebGpuDevice: this environment has no WebGPU (navigator.gpu is undefined)',
    });
    expect(await browser.listWebGpuAdapters()).toEqual([]);
  });
});
