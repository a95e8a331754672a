import type { Options } from 'tsup';

/** Shared tsup settings: ESM only, declarations, sourcemaps, one bundle per entry. */
export function packageBuild(entry: Record<string, string> = { index: 'src/index.ts' }): Options {
  return {
    entry,
    format: ['esm'],
    dts: true,
    sourcemap: true,
    clean: true,
    target: 'es2022',
    splitting: false,
    treeshake: true,
  };
}
