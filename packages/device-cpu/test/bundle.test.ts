/**
 * The package as a browser bundler sees it: esbuild (`--bundle --platform=browser --format=esm`) of
 * `@keel/device-cpu` resolves the `browser` export condition to dist/ (the browser build is the
 * package's default, so dist/index.js itself bundles for the browser), and the bundle (the
 * device, its Keel dependencies, and the worker entry) names no Node built-in. The worker is still
 * referenced as `new URL('./worker.js', import.meta.url)` inside `new Worker(...)`, the pattern
 * bundlers recognise. Node resolution (the `node` condition) keeps the worker_threads build (dist/node/).
 * Needs the built package (pnpm build).
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';

const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));
const NODE_BUILTIN = /\bnode:[a-z_]+|worker_threads|["']os["']|\brequire\(/;

/** Bundles `source` (module text, or `{ entry }`: a file of the package, as a worker entry point). */
async function bundle(
  source: string | { entry: string },
  platform: 'browser' | 'node',
): Promise<{ text: string; inputs: string[] }> {
  const result = await build({
    ...(typeof source === 'string'
      ? { stdin: { contents: source, resolveDir: PACKAGE_DIR, loader: 'js' as const } }
      : { entryPoints: [`${PACKAGE_DIR}${source.entry}`] }),
    bundle: true,
    platform,
    format: 'esm',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const metafile = result.metafile as Metafile;
  return { text: result.outputFiles[0]!.text, inputs: Object.keys(metafile.inputs) };
}

describe('esbuild --bundle --platform=browser --format=esm', () => {
  it('resolves @keel/device-cpu to the browser build, with no Node built-ins in the output', async () => {
    const { text, inputs } = await bundle("export { createCpuDevice } from '@keel/device-cpu';", 'browser');
    expect(inputs.some((input) => input.endsWith('device-cpu/dist/index.js'))).toBe(true);
    expect(inputs.some((input) => input.includes('device-cpu/dist/node/'))).toBe(false);
    expect(inputs.some((input) => input.includes('packages/fence/'))).toBe(true);
    expect(text).not.toMatch(NODE_BUILTIN);
    expect(text).toMatch(/new Worker\(new URL\("\.\/worker\.js", import\.meta\.url\), \{ type: "module"/);
  });

  it('bundles the browser worker entry with no Node built-ins', async () => {
    const { text, inputs } = await bundle({ entry: 'dist/worker.js' }, 'browser');
    expect(inputs.some((input) => input.endsWith('device-cpu/dist/worker.js'))).toBe(true);
    expect(text).not.toMatch(NODE_BUILTIN);
    expect(text).toMatch(/Atomics\.wait\(/); // workers may block; the page never does
  });
});

describe('Node resolution', () => {
  it('keeps the worker_threads build under the node condition', async () => {
    const { text, inputs } = await bundle("export { createCpuDevice } from '@keel/device-cpu';", 'node');
    expect(inputs.some((input) => input.endsWith('device-cpu/dist/node/index.js'))).toBe(true);
    expect(text).toMatch(/node:worker_threads/);
    const require = createRequire(new URL('../package.json', import.meta.url));
    expect(require.resolve('@keel/device-cpu')).toBe(`${PACKAGE_DIR}dist/node/index.cjs`);
  });
});

describe('dist/index.js as a file (a checker bundling each package entry directly)', () => {
  it('bundles for the browser with no Node built-ins: the browser build is the default', async () => {
    const { text, inputs } = await bundle({ entry: 'dist/index.js' }, 'browser');
    expect(inputs.some((input) => input.includes('device-cpu/dist/node/'))).toBe(false);
    expect(text).not.toMatch(NODE_BUILTIN);
    expect(text).toMatch(/new Worker\(new URL\("\.\/worker\.js", import\.meta\.url\)/);
  });
});

describe('the CommonJS browser build (require through a bundler)', () => {
  it('loads in a Web Worker-like scope (no document, no __filename): import.meta.url is the worker location', async () => {
    const result = await build({
      stdin: {
        contents:
          "const cpu = require('@keel/device-cpu'); globalThis.__loaded = typeof cpu.createCpuDevice;",
        resolveDir: PACKAGE_DIR,
        loader: 'js',
      },
      bundle: true,
      platform: 'browser',
      format: 'iife',
      write: false,
      logLevel: 'silent',
    });
    const text = result.outputFiles[0]!.text;
    expect(text).not.toMatch(/getImportMetaUrl|new URL\(`file:\$\{__filename\}`\)/);
    // A worker's global scope: `self` with a location, no `document`, no CommonJS `__filename`.
    const { runInNewContext } = await import('node:vm');
    const scope: Record<string, unknown> = { URL, Atomics, SharedArrayBuffer, console };
    scope.self = Object.assign(scope, { location: { href: 'https://example.test/app/worker-bundle.js' } });
    scope.globalThis = scope;
    runInNewContext(text, scope);
    expect(scope.__loaded).toBe('function');
  });
});
