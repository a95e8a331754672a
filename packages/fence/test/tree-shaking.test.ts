/**
 * Tree-shaking of the built package (dist/index.js, one file), as a browser bundler sees it: a bundle
 * that imports only `TimelineSemaphore` and `Fence` (what @keel/device-webgpu needs) leaves
 * SharedTimelineSemaphore and its module-level state out. That holds only while every module-level
 * value of shared-timeline-semaphore.ts is side-effect free and the semaphore classes have no computed
 * class fields (evaluated at class definition). Needs the built package (pnpm build).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const DIST = fileURLToPath(new URL('../dist/index.js', import.meta.url));

async function bundle(names: string): Promise<string> {
  const result = await build({
    stdin: {
      contents: `export { ${names} } from ${JSON.stringify(DIST)};`,
      resolveDir: path.dirname(DIST),
      loader: 'js',
    },
    bundle: true,
    platform: 'browser',
    format: 'esm',
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]?.text ?? '';
}

describe('@keel/fence tree-shaking (esbuild, built package)', () => {
  it('leaves SharedTimelineSemaphore out of a bundle that imports TimelineSemaphore and Fence only', async () => {
    const text = await bundle('TimelineSemaphore, Fence');
    expect(text).toContain('var TimelineSemaphore = class');
    expect(text).not.toContain('var SharedTimelineSemaphore = class');
    expect(text).not.toContain('fromHandle');
    expect(text).not.toMatch(/Atomics\./);
  });

  it('keeps it where it is imported (the check above can fail)', async () => {
    const text = await bundle('SharedTimelineSemaphore');
    expect(text).toContain('var SharedTimelineSemaphore = class');
    expect(text).toMatch(/Atomics\.waitAsync/);
  });

  it('leaves both semaphore classes out of a bundle that imports KeelError only', async () => {
    const text = await bundle('KeelError');
    expect(text).not.toContain('var TimelineSemaphore = class');
    expect(text).not.toContain('var SharedTimelineSemaphore = class');
  });
});
