/**
 * `pnpm bench bundle`: what Keel costs a web page, as esbuild bundles it for the browser (minified,
 * `--platform=browser --format=esm`), in KiB after gzip (level 9), from the built packages as a user's
 * project imports them.
 *
 * - fence_kib: `export * from '@keel/fence'` (everything in it).
 * - device_cpu_kib, device_webgpu_kib: `export * from '@keel/device-cpu'` / `'@keel/device-webgpu'`.
 * - create_device_kib: `import { createDevice } from 'keel'` (the umbrella's one-call entry: both devices).
 * - tfjs_core_webgpu_kib: `import { tensor } from '@tensorflow/tfjs-core'` with the
 *   `@tensorflow/tfjs-backend-webgpu` side-effect import (registers the backend), for comparison (absent
 *   when it does not bundle from node_modules).
 *
 * Where an entry does not bundle for the browser because the package imports Node built-ins, it is
 * measured again with them left external and `<name>_node_external` is 1 (0 when it bundled as is).
 * - over_budget: how many figures are over their budget (BUDGET_KIB: issue 13's figures); each one is
 *   named on stderr.
 *
 * The suite fails when tree-shaking keeps code that was not imported: `@keel/fence` alone holds no device or hal code,
 * a `TimelineSemaphore` imported through `keel` holds no device code (nor `SharedTimelineSemaphore`),
 * `@keel/device-webgpu` holds no `SharedTimelineSemaphore` (it uses `TimelineSemaphore` only), and
 * `createDevice` holds no scheduler or residency code.
 */
import { realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import * as esbuild from 'esbuild';
import { type Metrics, metric, type Suite } from '../harness.ts';

const benchRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Budgets in KiB gzip (issue 13's figures when they were set); a figure above one fails the suite. */
export const BUDGET_KIB = {
  fence_kib: 6.1,
  device_cpu_kib: 32.9,
  device_webgpu_kib: 37.4,
  create_device_kib: 52,
  tfjs_core_webgpu_kib: Number.POSITIVE_INFINITY, // a comparison, not ours to budget
} as const;

type Figure = keyof typeof BUDGET_KIB;

/** String literals only their package's code holds (minified bundles keep string literals). */
const MARKERS = {
  hal: 'QueueAffinity.',
  deviceCpu: 'createCpuDevice',
  deviceWebGpu: 'createWebGpuDevice',
  scheduler: 'Scheduler.submit',
  residency: 'ResidencyManager.',
  sharedSemaphore: 'SharedTimelineSemaphore.fromHandle',
} as const;

/** Node built-ins, with and without the `node:` prefix, for the fallback measurement. */
const NODE_BUILTINS = [
  'node:*',
  'worker_threads',
  'child_process',
  'os',
  'fs',
  'path',
  'url',
  'module',
  'crypto',
  'util',
  'zlib',
];

interface Bundled {
  readonly text: string;
  readonly gzipKib: number;
  readonly nodeExternal: boolean;
}

function isNodeBuiltinFailure(error: unknown): boolean {
  const errors = (error as { errors?: { text?: string }[] }).errors ?? [];
  return (
    errors.length > 0 && errors.every((e) => /node:|built into node|worker_threads|"os"/.test(e.text ?? ''))
  );
}

/** Bundles `source` (resolved from `resolveDir`) for the browser, minified; gzip size in KiB. */
export async function bundleForBrowser(source: string, resolveDir = benchRoot): Promise<Bundled> {
  const build = async (external: string[]) => {
    const result = await esbuild.build({
      stdin: { contents: source, resolveDir, loader: 'js', sourcefile: 'entry.js' },
      bundle: true,
      platform: 'browser',
      format: 'esm',
      minify: true,
      write: false,
      logLevel: 'silent',
      external,
      outdir: path.join(benchRoot, '.bundle-out'), // not written (write: false)
    });
    const js = result.outputFiles.filter((f) => f.path.endsWith('.js'));
    const text = js.map((f) => f.text).join('\n');
    const bytes = js.reduce((n, f) => n + gzipSync(f.contents, { level: 9 }).length, 0);
    return { text, gzipKib: Math.round((bytes / 1024) * 10) / 10 };
  };
  try {
    return { ...(await build([])), nodeExternal: false };
  } catch (error) {
    if (!isNodeBuiltinFailure(error)) throw error;
    return { ...(await build(NODE_BUILTINS)), nodeExternal: true };
  }
}

function assertLeftOut(what: string, text: string, markers: readonly (keyof typeof MARKERS)[]): void {
  for (const m of markers) {
    if (text.includes(MARKERS[m])) {
      throw new Error(
        `bundle: tree-shaking kept ${m} code ('${MARKERS[m]}') in ${what}, which does not import it`,
      );
    }
  }
}

/** The directory from which TF.js core resolves beside its WebGPU backend (pnpm keeps it there). */
function tfjsResolveDir(): string {
  const require = createRequire(path.join(benchRoot, 'package.json'));
  const backend = require.resolve('@tensorflow/tfjs-backend-webgpu/package.json');
  return path.dirname(realpathSync(backend));
}

export const bundleSuite: Suite = {
  name: 'bundle',
  description: 'browser bundle sizes (esbuild, minified + gzip, KiB) of Keel entries vs TF.js',
  async run({ log }) {
    const metrics: Metrics = {};
    const record = (name: Figure, b: Bundled) => {
      metrics[name] = metric(b.gzipKib, 'KiB');
      metrics[`${name.replace(/_kib$/, '')}_node_external`] = metric(b.nodeExternal ? 1 : 0, 'bool');
      log(`${name}: ${b.gzipKib} KiB gzip${b.nodeExternal ? ' (Node built-ins external)' : ''}`);
    };

    // The markers survive minification (else the tree-shaking checks below could not fail).
    const everything = await bundleForBrowser(`export * from 'keel';`);
    for (const [m, marker] of Object.entries(MARKERS)) {
      if (!everything.text.includes(marker))
        throw new Error(`bundle: marker '${marker}' (${m}) is not in 'keel'`);
    }
    const fence = await bundleForBrowser(`export * from '@keel/fence';`);
    assertLeftOut("'@keel/fence' alone", fence.text, [
      'hal',
      'deviceCpu',
      'deviceWebGpu',
      'scheduler',
      'residency',
    ]);
    record('fence_kib', fence);
    record('device_cpu_kib', await bundleForBrowser(`export * from '@keel/device-cpu';`));
    const webgpu = await bundleForBrowser(`export * from '@keel/device-webgpu';`);
    // WebGPU needs TimelineSemaphore only: fence's SharedTimelineSemaphore must tree-shake away.
    assertLeftOut("'@keel/device-webgpu'", webgpu.text, [
      'deviceCpu',
      'scheduler',
      'residency',
      'sharedSemaphore',
    ]);
    record('device_webgpu_kib', webgpu);
    const createDevice = await bundleForBrowser(
      `import { createDevice } from 'keel';\nexport { createDevice };`,
    );
    assertLeftOut("'createDevice' from 'keel'", createDevice.text, ['scheduler', 'residency']);
    record('create_device_kib', createDevice);
    const semaphore = await bundleForBrowser(
      `import { TimelineSemaphore } from 'keel';\nexport { TimelineSemaphore };`,
    );
    assertLeftOut("'TimelineSemaphore' from 'keel'", semaphore.text, [
      'deviceCpu',
      'deviceWebGpu',
      'scheduler',
      'sharedSemaphore',
    ]);

    try {
      const tfjs = await bundleForBrowser(
        `import { tensor } from '@tensorflow/tfjs-core';\nimport '@tensorflow/tfjs-backend-webgpu';\nexport { tensor };`,
        tfjsResolveDir(),
      );
      record('tfjs_core_webgpu_kib', tfjs);
    } catch (error) {
      log(`TF.js core + webgpu did not bundle offline: ${String((error as Error).message).split('\n')[0]}`);
    }

    // Budgets: the count over budget is a metric (0 is the goal); each one over is named on stderr.
    const over = (Object.keys(BUDGET_KIB) as Figure[]).filter(
      (k) => (metrics[k]?.value ?? 0) > BUDGET_KIB[k],
    );
    for (const k of over) log(`OVER BUDGET: ${k} ${metrics[k]?.value} KiB > ${BUDGET_KIB[k]} KiB`);
    metrics.over_budget = metric(over.length, 'count');
    return metrics;
  },
};
