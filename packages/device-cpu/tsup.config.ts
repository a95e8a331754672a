import { resolve } from 'node:path';
import { defineConfig, type Options } from 'tsup';
import { packageBuild } from '../../tsup.base.ts';

/**
 * Two builds from one source tree, picked by package.json's `exports` conditions:
 * - dist/ (`browser` and `default`, and `main`/`module`/`types`): the platform adapter is module Web
 *   Workers (src/platform/browser*.ts); no Node built-in is named anywhere in it, so dist/index.js
 *   bundles for the browser as it is;
 * - dist/node/ (`node` condition): the platform adapter is worker_threads (src/platform/node*.ts).
 * The sources import `./platform/current` and `./platform/current-worker`; the browser build resolves
 * them to the browser adapter. The worker script is loaded by URL (`new URL('./worker.js',
 * import.meta.url)`) from the index of the same build, so each build has its own worker.js beside it.
 * Each build has its own declarations (the same API), so that each condition names types beside its code.
 */
const browserPlatform = {
  name: 'keel-browser-platform',
  setup(build: { onResolve: (o: { filter: RegExp }, cb: () => { path: string }) => void }) {
    build.onResolve({ filter: /^\.\/platform\/current$/ }, () => ({
      path: resolve(import.meta.dirname, 'src/platform/browser.ts'),
    }));
    build.onResolve({ filter: /^\.\/platform\/current-worker$/ }, () => ({
      path: resolve(import.meta.dirname, 'src/platform/browser-worker.ts'),
    }));
  },
};

function browser(options: Options): Options {
  return { ...options, platform: 'browser', esbuildPlugins: [browserPlatform] };
}

/** The Node build keeps the `node:` prefix, so that any bundler knows these are Node built-ins. */
function node(options: Options): Options {
  return { ...options, outDir: 'dist/node', platform: 'node', clean: false, removeNodeProtocol: false };
}

export default defineConfig([
  browser(packageBuild(undefined, { importMetaUrl: true })),
  browser({ ...packageBuild({ worker: 'src/worker.ts' }, { formats: ['esm'] }), dts: false, clean: false }),
  node(packageBuild(undefined, { importMetaUrl: true })),
  node({ ...packageBuild({ worker: 'src/worker.ts' }, { formats: ['esm'] }), dts: false }),
]);
