import type { Options } from 'tsup';

/**
 * Shared tsup settings: one bundle per entry, declarations, sourcemaps. Package entries are built twice,
 * ESM (`.js`, `.d.ts`) for `import` and bundlers and CommonJS (`.cjs`, `.d.cts`) for `require()` on
 * Node 20, whose `require(esm)` is behind a flag (CONTRIBUTING.md § Module formats). `shims` gives the
 * CommonJS build `import.meta.url` (workers and kernel modules resolve beside the bundle); dynamic
 * `import()` stays `import()` in both. Entries loaded only by URL (the CPU device's worker, kernel
 * modules) and the CLI pass `formats: ['esm']`.
 */
export function packageBuild(
  entry: Record<string, string> = { index: 'src/index.ts' },
  { formats = ['esm', 'cjs'] }: { formats?: ('esm' | 'cjs')[] } = {},
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
    shims: formats.includes('cjs'),
  };
}
