import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Options } from 'tsup';

const SHIMS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'scripts/tsup-shims');

/**
 * Shared tsup settings: one bundle per entry, declarations, sourcemaps. Package entries are built twice,
 * ESM (`.js`, `.d.ts`) for `import` and bundlers and CommonJS (`.cjs`, `.d.cts`) for `require()` on
 * Node 20, whose `require(esm)` is behind a flag (CONTRIBUTING.md § Module formats). The CommonJS build
 * of a package whose code reads `import.meta.url` (`importMetaUrl: true`: the CPU device's worker
 * script and the MLP's kernel module resolve beside the bundle) gets it from scripts/tsup-shims: on Node `pathToFileURL(__filename)` (tsup's own shim does
 * not percent-encode, so `#` or `%` in the install path broke it), in browser builds the current
 * script or the worker's location (tsup's reads `__filename` outside a page: a ReferenceError in a Web
 * Worker). Dynamic `import()` stays `import()` in both. Entries loaded only by URL (the CPU device's worker, kernel
 * modules) and the CLI pass `formats: ['esm']`. Node built-ins keep their `node:` prefix in the output
 * (tsup 8 strips it by default), so consumers' bundlers recognise them as Node built-ins.
 */
export function packageBuild(
  entry: Record<string, string> = { index: 'src/index.ts' },
  {
    formats = ['esm', 'cjs'],
    importMetaUrl = false,
  }: { formats?: ('esm' | 'cjs')[]; importMetaUrl?: boolean } = {},
): Options {
  return {
    entry,
    format: formats,
    // Members and exports marked `@internal` are left out of the published types (api/*.api.txt lists
    // what remains; `pnpm api:check` fails on an undocumented change).
    dts: { compilerOptions: { stripInternal: true } },
    sourcemap: true,
    clean: true,
    target: 'es2022',
    splitting: false,
    treeshake: true,
    shims: false,
    removeNodeProtocol: false,
    esbuildOptions(esbuild, context) {
      if (!importMetaUrl || context.format !== 'cjs') return;
      const shim = esbuild.platform === 'browser' ? 'import-meta-url.browser.js' : 'import-meta-url.node.js';
      esbuild.define = { ...esbuild.define, 'import.meta.url': '__keelImportMetaUrl' };
      esbuild.inject = [...(esbuild.inject ?? []), path.join(SHIMS, shim)];
    },
  };
}

/**
 * The browser build of a package whose sources have a platform layer: a bundle (the `browser` and
 * `default` conditions of the package's `exports`, at dist/index.js) in which each relative import of a
 * `platform/<name>` module resolves to `platform/<name>.browser.ts` where that file exists. The Node
 * build (the `node` condition) keeps `platform/<name>.ts`. Chosen at build time, so the browser graph
 * never sees the Node file.
 */
export function browserBuild(
  entry: Record<string, string> = { index: 'src/index.ts' },
  {
    formats = ['esm'],
    dts = false,
    clean = false,
    importMetaUrl = false,
  }: { formats?: ('esm' | 'cjs')[]; dts?: boolean; clean?: boolean; importMetaUrl?: boolean } = {},
): Options {
  const base = packageBuild(entry, { formats, importMetaUrl });
  return {
    ...base,
    dts: dts ? base.dts : false,
    clean,
    platform: 'browser',
    esbuildPlugins: [
      {
        name: 'keel-browser-platform',
        setup(build) {
          build.onResolve({ filter: /^\.{1,2}\/(?:.*\/)?platform\/[\w-]+$/ }, (args) => {
            const candidate = path.resolve(args.resolveDir, `${args.path}.browser.ts`);
            return existsSync(candidate) ? { path: candidate } : undefined;
          });
        },
      },
    ],
  };
}
