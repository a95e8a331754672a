/**
 * Where a browser bundle's bytes come from, source file by source file: `node bench/src/bundle-breakdown.ts
 * [ENTRY] [TOP]` (run with `pnpm -s tsx`) bundles ENTRY (default: `export * from '@keel/device-cpu';`)
 * the way `pnpm bench bundle` does (esbuild, browser, ESM, minified) but from the packages' TypeScript
 * sources, each `platform/<name>` import resolved to its `.browser.ts` file as the browser build does,
 * and prints the gzip size, the minified bytes per package and the TOP (default 40) largest files. A tool
 * for size work; the budgets themselves are measured from the built packages by `pnpm bench bundle`.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import * as esbuild from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const packagesDir = path.join(root, 'packages');

/** Package name → its directory under packages/. */
const packageDirs = new Map<string, string>();
for (const dir of readdirSync(packagesDir)) {
  const manifest = path.join(packagesDir, dir, 'package.json');
  if (!existsSync(manifest)) continue;
  const { name } = JSON.parse(readFileSync(manifest, 'utf8')) as { name: string };
  packageDirs.set(name, dir);
}

/** `@keel/x` → src/index.ts, `@keel/x/sub` → src/sub.ts (or src/sub/index.ts). */
function resolveSource(specifier: string): string | undefined {
  const match = /^((?:@keel\/)?[^/@]+)(?:\/(.+))?$/.exec(specifier);
  const dir = match ? packageDirs.get(match[1] ?? '') : undefined;
  if (match === null || dir === undefined) return undefined;
  const src = path.join(packagesDir, dir, 'src');
  const sub = match[2];
  const candidates =
    sub === undefined
      ? [path.join(src, 'index.ts')]
      : [path.join(src, `${sub}.ts`), path.join(src, sub, 'index.ts')];
  return candidates.find((c) => existsSync(c));
}

const entry = process.argv[2] ?? "export * from '@keel/device-cpu';";
const top = Number(process.argv[3] ?? 40);

const result = await esbuild.build({
  stdin: { contents: entry, resolveDir: path.join(root, 'bench'), loader: 'js', sourcefile: 'entry.js' },
  bundle: true,
  platform: 'browser',
  format: 'esm',
  minify: true,
  write: false,
  metafile: true,
  logLevel: 'silent',
  outdir: path.join(root, 'bench', '.bundle-out'),
  plugins: [
    {
      name: 'keel-sources',
      setup(build) {
        build.onResolve({ filter: /^(@keel\/|keel$)/ }, (args) => {
          const file = resolveSource(args.path);
          return file === undefined ? undefined : { path: file };
        });
        build.onResolve({ filter: /^\.{1,2}\/(?:.*\/)?platform\/[\w-]+$/ }, (args) => {
          // device-cpu's `platform/current(-worker)` → `platform/browser(-worker).ts`; elsewhere
          // `platform/<name>` → `platform/<name>.browser.ts` (tsup.base.ts browserBuild).
          const browser = args.path.endsWith('/current')
            ? args.path.replace(/current$/, 'browser.ts')
            : args.path.endsWith('/current-worker')
              ? args.path.replace(/current-worker$/, 'browser-worker.ts')
              : `${args.path}.browser.ts`;
          const file = path.resolve(args.resolveDir, browser);
          return existsSync(file) ? { path: file } : undefined;
        });
      },
    },
  ],
});

const output = result.outputFiles.find((f) => f.path.endsWith('.js'));
const meta = Object.values(result.metafile.outputs).find((o) => o.entryPoint !== undefined || o.bytes > 0);
if (output === undefined || meta === undefined)
  throw new Error('bundle-breakdown: esbuild wrote no JavaScript');
const kib = (n: number) => (n / 1024).toFixed(1);
console.log(
  `${entry}\n  ${kib(output.contents.length)} KiB minified, ${(gzipSync(output.contents, { level: 9 }).length / 1024).toFixed(2)} KiB gzip`,
);
const files = Object.entries(meta.inputs).map(([file, v]) => ({
  file: file.replace(/^.*packages\//, ''),
  bytes: v.bytesInOutput,
}));
const byPackage = new Map<string, number>();
for (const f of files) {
  const pkg = f.file.split('/')[0] ?? f.file;
  byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + f.bytes);
}
console.log(
  `  by package (KiB minified): ${[...byPackage]
    .filter(([, b]) => b > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([p, b]) => `${p} ${kib(b)}`)
    .join(', ')}`,
);
for (const f of files.sort((a, b) => b.bytes - a.bytes).slice(0, top)) {
  if (f.bytes > 0) console.log(`  ${String(f.bytes).padStart(7)}  ${f.file}`);
}
