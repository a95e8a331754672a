#!/usr/bin/env node
// `node scripts/bundle-check.mjs [name...]`: every published package (each packages/* without
// `"private": true`, or the names given) bundles for the browser from its built package, as a user's
// project would import it, with esbuild (`--bundle --platform=browser --format=esm`) and with Vite (a
// production build of a one-line module importing the package), and its `dist/index.js` bundles as a
// file too (`esbuild <pkg>/dist/index.js --bundle --platform=browser --format=esm`: the browser build
// is each package's default; Node-only builds sit under the `node` condition). A package passes when
// every bundle succeeds and no output holds a Node built-in (`node:` specifiers, worker_threads, child_process,
// bare `os`/`fs`/`path`/... imports, Vite's `__vite-browser-external` stand-in). Assets a package
// resolves with `new URL('./x', import.meta.url)` must come out of the Vite build as files. Run after
// `pnpm build`; part of `pnpm test`. Exits non-zero and names each failure.
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { build as viteBuild } from 'vite';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Node built-ins as they appear in bundled output: specifiers in import/require/export-from. */
const NODE_BUILTIN =
  /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|\bimport\s+)["'](node:[\w/]+|worker_threads|child_process|os|fs|fs\/promises|path|url|crypto|module|net|tls|http|https|stream|util|v8|vm|perf_hooks|async_hooks|process|buffer|events)["']|__vite-browser-external/g;

/** The published packages: name and directory. */
export function publishedPackages() {
  const dirs = readdirSync(path.join(root, 'packages'));
  const out = [];
  for (const dir of dirs.sort()) {
    let manifest;
    try {
      manifest = JSON.parse(readFileSync(path.join(root, 'packages', dir, 'package.json'), 'utf8'));
    } catch {
      continue;
    }
    if (manifest.private !== true) out.push({ name: manifest.name, dir: path.join(root, 'packages', dir) });
  }
  return out;
}

/** Node built-ins found in `text` (deduplicated). */
export function nodeBuiltinsIn(text) {
  const found = new Set();
  for (const m of text.matchAll(NODE_BUILTIN)) found.add(m[1] ?? '__vite-browser-external');
  return [...found];
}

/** A scratch project whose node_modules links every published package by name. */
function scratchProject(packages) {
  const dir = mkdtempSync(path.join(tmpdir(), 'keel-bundle-check-'));
  for (const p of packages) {
    const link = path.join(dir, 'node_modules', p.name);
    mkdirSync(path.dirname(link), { recursive: true });
    symlinkSync(p.dir, link, 'dir');
  }
  return dir;
}

function filesUnder(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) out.push(path.join(entry.parentPath ?? entry.path, entry.name));
  }
  return out;
}

function errorText(error) {
  const errors = error?.errors;
  if (Array.isArray(errors) && errors.length > 0) return errors.map((e) => e.text ?? String(e)).join('; ');
  return String(error?.message ?? error).split('\n')[0];
}

async function checkEsbuild(project, name) {
  const entry = path.join(project, `esbuild-${name.replaceAll('/', '+')}.js`);
  writeFileSync(entry, `export * from '${name}';\n`);
  try {
    const result = await esbuild.build({
      entryPoints: [entry],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      logLevel: 'silent',
      outdir: path.join(project, 'out-esbuild'),
    });
    const text = result.outputFiles.map((f) => f.text).join('\n');
    const builtins = nodeBuiltinsIn(text);
    return builtins.length === 0 ? null : `Node built-ins in the output: ${builtins.join(', ')}`;
  } catch (error) {
    return errorText(error);
  }
}

/** `esbuild <dir>/dist/index.js --bundle --platform=browser --format=esm`: the file itself, not the package. */
async function checkEsbuildFile(dir) {
  try {
    const result = await esbuild.build({
      entryPoints: [path.join(dir, 'dist', 'index.js')],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      logLevel: 'silent',
      outdir: path.join(dir, '.bundle-check-out'), // not written (write: false)
    });
    const builtins = nodeBuiltinsIn(result.outputFiles.map((f) => f.text).join('\n'));
    return builtins.length === 0 ? null : `Node built-ins in the output: ${builtins.join(', ')}`;
  } catch (error) {
    return errorText(error);
  }
}

async function checkVite(project, name) {
  const slug = name.replaceAll('/', '+');
  const entry = path.join(project, `vite-${slug}.js`);
  // Keep every export reachable (a side-effect-free re-export would be shaken away entirely).
  writeFileSync(entry, `import * as m from '${name}';\nglobalThis.__keel = m;\n`);
  const outDir = path.join(project, `out-vite-${slug}`);
  try {
    await viteBuild({
      root: project,
      configFile: false,
      logLevel: 'silent',
      build: {
        outDir,
        emptyOutDir: true,
        minify: false,
        assetsInlineLimit: 0,
        rollupOptions: { input: entry },
      },
    });
  } catch (error) {
    return errorText(error);
  }
  const files = filesUnder(outDir);
  const text = files
    .filter((f) => f.endsWith('.js'))
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n');
  const builtins = nodeBuiltinsIn(text);
  if (builtins.length > 0) return `Node built-ins in the output: ${builtins.join(', ')}`;
  // Assets the package resolves by URL next to its bundle must be emitted (copied) by the build.
  // Vite rewrites them to `new URL("/assets/<name>-<hash>.js", "" + import.meta.url)`.
  for (const m of text.matchAll(/new URL\(\s*["']([^"']+)["']\s*,[^)]*import\.meta\.url\s*\)/g)) {
    const url = m[1];
    if (/^(?:data|blob|https?):/.test(url)) continue;
    const target = url.startsWith('/')
      ? path.join(outDir, url)
      : path.resolve(path.dirname(files.find((f) => f.endsWith('.js')) ?? outDir), url);
    if (!files.includes(target)) return `asset '${url}' (new URL(..., import.meta.url)) was not emitted`;
  }
  return null;
}

async function main() {
  const wanted = process.argv.slice(2);
  const all = publishedPackages();
  const packages = wanted.length === 0 ? all : all.filter((p) => wanted.includes(p.name));
  if (packages.length === 0) throw new Error(`bundle-check: no published package named ${wanted.join(', ')}`);
  const project = scratchProject(all);
  const failures = [];
  try {
    for (const { name, dir } of packages) {
      for (const [bundler, check] of [
        ['esbuild', checkEsbuild],
        ['vite', checkVite],
        ['esbuild dist/index.js', () => checkEsbuildFile(dir)],
      ]) {
        const problem = await check(project, name);
        if (problem === null) console.log(`ok    ${name} (${bundler})`);
        else {
          console.log(`FAIL  ${name} (${bundler}): ${problem}`);
          failures.push(`${name} (${bundler})`);
        }
      }
    }
  } finally {
    rmSync(project, { recursive: true, force: true });
  }
  if (failures.length > 0) {
    console.log(`bundle-check: ${failures.length} failure(s): ${failures.join(', ')}`);
    process.exit(1);
  }
  console.log(
    `bundle-check: ${packages.length} packages bundle for the browser with esbuild and Vite (and their dist/index.js as a file)`,
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
