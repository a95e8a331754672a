import { resolve } from 'node:path';
import { defineConfig, type Options } from 'tsup';
import { packageBuild } from '../../tsup.base.ts';

/**
 * Two builds from one source tree, picked by package.json's `exports` conditions:
 * - dist/ (Node: `node` condition): the platform adapter is worker_threads (src/platform/node*.ts);
 * - dist/browser/ (`browser` and `default`): the platform adapter is module Web Workers
 *   (src/platform/browser*.ts); no Node built-in is named anywhere in it.
 * The sources import `./platform/current` and `./platform/current-worker`; the browser build resolves
 * them to the browser adapter. The worker script is loaded by URL (`new URL('./worker.js',
 * import.meta.url)`) from the index of the same build, so each build has its own worker.js beside it.
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
  return {
    ...options,
    outDir: 'dist/browser',
    platform: 'browser',
    clean: false,
    esbuildPlugins: [browserPlatform],
  };
}

/** The Node build keeps the `node:` prefix, so that any bundler knows these are Node built-ins. */
function node(options: Options): Options {
  return { ...options, platform: 'node', removeNodeProtocol: false };
}

export default defineConfig([
  node(packageBuild()),
  node({ ...packageBuild({ worker: 'src/worker.ts' }, { formats: ['esm'] }), dts: false, clean: false }),
  browser(packageBuild()),
  browser({ ...packageBuild({ worker: 'src/worker.ts' }, { formats: ['esm'] }), dts: false }),
]);
