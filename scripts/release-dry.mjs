#!/usr/bin/env node
/**
 * `pnpm release:dry`: rehearses a release without publishing anything.
 *
 * 1. Copies the workspace (tracked and untracked, not ignored files) to a scratch directory, installs it
 *    offline from the pnpm store, applies the pending changesets there (`changeset version`) and builds.
 * 2. Packs every public package with `pnpm pack` (which rewrites `workspace:` ranges to real versions)
 *    and checks each tarball: LICENSE identical to the root's, publint (strict) and
 *    @arethetypeswrong/cli (full profile: ESM and CommonJS, every resolution mode).
 * 3. Installs the tarballs into scratch consumer projects outside the workspace (npm, with `overrides`
 *    pointing every @keel package at its tarball so nothing of Keel comes from the registry):
 *    - `single-packages` takes only @keel/fence and @keel/command-buffer: an ESM program and a type-check.
 *    - `matrix` takes every public package, installed once: an ESM program (`import`, trains the MLP a
 *      few steps), a CommonJS program (`require()` on Node 20: task-mode CPU device, a fence signalled
 *      from a worker, KeelError.is across the CommonJS and ESM copies), then one type-check per cell of
 *      the consumer matrix (MATRIX below: TypeScript 5.9 and 7, moduleResolution node16 / nodenext /
 *      bundler, with and without the DOM lib, all `strict` + `exactOptionalPropertyTypes` with
 *      `skipLibCheck` off). Both compilers come from the lockfile (TypeScript 7 as the `typescript7`
 *      alias of scripts/release/toolchain); @types/node and @webgpu/types are linked from the workspace.
 * 4. Prints a table of packed sizes and checks the "packed" column of the README's package table
 *    (between the `packed-sizes` markers) against it: figures off by more than 1 KiB or 2 % fail with a
 *    diff; `--write` updates
 *    README.md instead (the only change this script ever makes to the working tree).
 *
 * Exits non-zero at the first failure. Options: `--keep` keeps the scratch directory, `--write`.
 */
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const keep = process.argv.includes('--keep');
const write = process.argv.includes('--write');
const started = Date.now();
const seconds = (since) => `${((Date.now() - since) / 1000).toFixed(1)} s`;
const scratch = mkdtempSync(join(tmpdir(), 'keel-release-'));
const log = (line) => process.stdout.write(`release:dry: ${line}\n`);

function run(cmd, args, cwd, { quiet = true } = {}) {
  try {
    return execFileSync(cmd, args, {
      cwd,
      stdio: quiet ? 'pipe' : 'inherit',
      encoding: 'utf8',
      env: { ...process.env, FORCE_COLOR: '0' },
    });
  } catch (error) {
    process.stderr.write(
      `release:dry: '${cmd} ${args.join(' ')}' failed in ${cwd}\n${error.stdout ?? ''}${error.stderr ?? ''}\n`,
    );
    throw error;
  }
}

try {
  // 1. Scratch copy, offline install, version, build.
  const ws = join(scratch, 'workspace');
  const files = run('git', ['ls-files', '-co', '--exclude-standard', '-z'], root).split('\0').filter(Boolean);
  for (const file of files) {
    const from = join(root, file);
    try {
      if (!statSync(from).isFile()) continue;
    } catch {
      continue; // deleted in the working tree but still in the index
    }
    mkdirSync(dirname(join(ws, file)), { recursive: true });
    cpSync(from, join(ws, file));
  }
  log(`copied ${files.length} files to ${ws}`);
  run('pnpm', ['install', '--offline', '--frozen-lockfile', '--ignore-scripts'], ws);
  run('pnpm', ['rebuild', 'esbuild'], ws);
  const pending = readdirSync(join(ws, '.changeset')).filter((f) => f.endsWith('.md') && f !== 'README.md');
  log(`pending changesets: ${pending.length === 0 ? 'none' : pending.join(', ')}`);
  run('pnpm', ['exec', 'changeset', 'version'], ws);
  run('pnpm', ['exec', 'turbo', 'run', 'build', '--output-logs=errors-only'], ws);

  // 2. Pack and check every public package.
  const tarballs = join(scratch, 'tarballs');
  mkdirSync(tarballs);
  const packages = readdirSync(join(ws, 'packages'))
    .map((dir) => ({
      dir: join(ws, 'packages', dir),
      pkg: JSON.parse(readFileSync(join(ws, 'packages', dir, 'package.json'), 'utf8')),
    }))
    .filter(({ pkg }) => pkg.private !== true);
  const packed = new Map();
  const sizes = [];
  const license = readFileSync(join(ws, 'LICENSE'), 'utf8');
  for (const { dir, pkg } of packages) {
    const before = new Set(readdirSync(tarballs));
    run('pnpm', ['pack', '--pack-destination', tarballs], dir);
    const file = readdirSync(tarballs).find((f) => !before.has(f));
    const tgz = join(tarballs, file);
    packed.set(pkg.name, tgz);
    const manifest = JSON.parse(run('tar', ['-xOzf', tgz, 'package/package.json'], root));
    const leftover = JSON.stringify(manifest).includes('workspace:');
    if (leftover) throw new Error(`${pkg.name}: packed package.json still has a workspace: range`);
    for (const field of ['repository', 'homepage', 'bugs', 'keywords']) {
      if (manifest[field] === undefined)
        throw new Error(`${pkg.name}: packed package.json has no '${field}'`);
    }
    if (run('tar', ['-xOzf', tgz, 'package/LICENSE'], root) !== license) {
      throw new Error(`${pkg.name}: packed LICENSE differs from the repository's LICENSE`);
    }
    run('pnpm', ['exec', 'publint', '--strict', dir], ws);
    run('pnpm', ['exec', 'attw', tgz, '--format', 'ascii', '--no-emoji'], ws);
    const entries = run('tar', ['-tzf', tgz], root).trim().split('\n').length;
    sizes.push({
      name: pkg.name,
      version: manifest.version,
      kib: (statSync(tgz).size / 1024).toFixed(1),
      entries,
    });
    log(`${pkg.name}@${manifest.version}: packed, publint ok, attw ok`);
  }

  // 3. Consumers outside the workspace.
  const consumersStarted = Date.now();
  const overrides = Object.fromEntries([...packed].map(([name, tgz]) => [name, `file:${tgz}`]));
  const consumer = (name) => {
    const dir = join(scratch, `consumer-${name}`);
    cpSync(join(ws, 'scripts', 'release', name), dir, { recursive: true });
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    for (const dep of Object.keys(pkg.dependencies)) pkg.dependencies[dep] = overrides[dep];
    pkg.overrides = overrides;
    writeFileSync(join(dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
    run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], dir);
    return dir;
  };
  const tsc = {
    5.9: join(ws, 'node_modules', 'typescript', 'bin', 'tsc'),
    7: join(ws, 'scripts', 'release', 'toolchain', 'node_modules', 'typescript7', 'bin', 'tsc'),
  };
  for (const [version, bin] of Object.entries(tsc)) {
    const reported = run(process.execPath, [bin, '--version'], ws).trim();
    if (!reported.startsWith(`Version ${version}`))
      throw new Error(`${bin}: expected TypeScript ${version}, got ${reported}`);
  }

  const single = consumer('single-packages');
  log(`consumer single-packages: ${run(process.execPath, ['main.mjs'], single).trim()}`);
  run(process.execPath, [tsc['5.9'], '-p', 'tsconfig.json'], single);
  log('consumer single-packages: type-check against the installed types ok');

  const matrix = consumer('matrix');
  log(`consumer matrix: installed every package once (${seconds(consumersStarted)} so far)`);
  // Types a Node-only project has (@types/node) and the optional peer of @keel/device-webgpu, from the
  // workspace's lockfile-pinned copies (as if the consumer had installed them; nothing downloads).
  // @webgpu/types is usually there already (the optional `webgpu` package depends on it); a cell sees
  // it only when its tsconfig lists it in `types`.
  const link = (from, name) => {
    const to = join(matrix, 'node_modules', name);
    if (existsSync(to)) return;
    mkdirSync(dirname(to), { recursive: true });
    symlinkSync(realpathSync(from), to, 'dir');
  };
  link(join(ws, 'node_modules', '@types', 'node'), '@types/node');
  link(join(ws, 'packages', 'device-webgpu', 'node_modules', '@webgpu', 'types'), '@webgpu/types');
  log(`consumer matrix: ${run(process.execPath, ['main.mjs'], matrix).trim()}`);
  log(`consumer matrix: ${run(process.execPath, ['main.cjs'], matrix).trim()}`);
  for (const ext of ['mts', 'cts']) cpSync(join(matrix, 'check.ts'), join(matrix, `check.${ext}`));
  const cells = [];
  for (const ts of ['5.9', '7']) {
    for (const resolution of ['node16', 'nodenext', 'bundler']) {
      for (const env of ['dom', 'node']) cells.push({ ts, resolution, env });
    }
  }
  // TypeScript 5.9's DOM lib has no WebGPU: a browser project adds @webgpu/types.
  cells.push({ ts: '5.9', resolution: 'bundler', env: 'dom+@webgpu/types' });
  const matrixStarted = Date.now();
  for (const cell of cells) {
    const name = `ts${cell.ts}-${cell.resolution}-${cell.env.replace(/[^a-z0-9]+/g, '-')}`;
    const dom = cell.env.startsWith('dom');
    // Full WebGPU types: TypeScript 7's DOM lib has them, or @webgpu/types; elsewhere they are opaque.
    const webgpuTypes = (dom && cell.ts === '7') || cell.env.includes('@webgpu/types');
    const files = cell.resolution === 'bundler' ? ['check.ts'] : ['check.mts', 'check.cts'];
    const config = {
      compilerOptions: {
        target: 'ES2022',
        module: { node16: 'Node16', nodenext: 'NodeNext', bundler: 'ESNext' }[cell.resolution],
        moduleResolution: { node16: 'Node16', nodenext: 'NodeNext', bundler: 'Bundler' }[cell.resolution],
        lib: dom ? ['ES2022', 'DOM'] : ['ES2022'],
        types: dom ? (cell.env.includes('@webgpu/types') ? ['@webgpu/types'] : []) : ['node'],
        strict: true,
        exactOptionalPropertyTypes: true,
        skipLibCheck: false,
        noEmit: true,
      },
      files: webgpuTypes ? [...files, 'gpu-types.ts'] : files,
    };
    writeFileSync(join(matrix, `tsconfig.${name}.json`), `${JSON.stringify(config, null, 2)}\n`);
    const cellStarted = Date.now();
    run(process.execPath, [tsc[cell.ts], '-p', `tsconfig.${name}.json`], matrix);
    log(`consumer matrix: ${name.padEnd(36)} ok (${config.files.join(' ')}; ${seconds(cellStarted)})`);
  }
  log(
    `consumer matrix: ${cells.length} cells type-checked in ${seconds(matrixStarted)}; consumers took ${seconds(consumersStarted)}`,
  );

  // 4. Sizes, and the README's "packed" column.
  log('packed sizes:');
  process.stdout.write('| package | version | packed | files |\n| --- | --- | --- | --- |\n');
  for (const s of sizes)
    process.stdout.write(`| \`${s.name}\` | ${s.version} | ${s.kib} KiB | ${s.entries} |\n`);
  const readmePath = join(root, 'README.md');
  const readme = readFileSync(readmePath, 'utf8');
  const expected = packedColumn(readme, sizes);
  // Exact figures are written with --write; the check tolerates drift below 1 KiB or 2 % per package
  // (a rebuild on another machine or a whitespace change must not fail CI), anything larger is stale.
  if (expected !== readme && (write || !withinTolerance(readme, expected))) {
    if (write) {
      writeFileSync(readmePath, expected);
      log('README.md: packed sizes updated (--write)');
    } else {
      const before = readme.split('\n');
      const after = expected.split('\n');
      const diff = before.flatMap((line, i) => (line === after[i] ? [] : [`- ${line}`, `+ ${after[i]}`]));
      throw new Error(
        `README.md: the packed sizes are stale; run \`pnpm release:dry --write\` to update them:\n${diff.join('\n')}`,
      );
    }
  } else log(`README.md: packed sizes match${expected === readme ? '' : ' (within 1 KiB or 2 %)'}`);
  log(`ok (${seconds(started)})`);
} finally {
  if (keep) log(`scratch kept at ${scratch}`);
  else rmSync(scratch, { recursive: true, force: true });
}

/** True when every packed size of `expected` is within 1 KiB or 2 % of the one in `readme`. */
function withinTolerance(readme, expected) {
  const column = (text) => [...text.matchAll(/\| ([0-9.]+) KiB \|$/gm)].map((m) => Number(m[1]));
  const a = column(readme);
  const b = column(expected);
  return a.length === b.length && a.every((kib, i) => Math.abs(kib - b[i]) <= Math.max(1, 0.02 * b[i]));
}

/**
 * README.md with the last column ("packed") of each package row between the `packed-sizes` markers set
 * to the rehearsal's size (rows of packages that are not packed, private ones, are left as they are).
 */
function packedColumn(readme, sizes) {
  const start = '<!-- packed-sizes:start -->';
  const end = '<!-- packed-sizes:end -->';
  const from = readme.indexOf(start);
  const to = readme.indexOf(end);
  if (from < 0 || to < from)
    throw new Error(`README.md: no ${start} ... ${end} block around the package table`);
  const byName = new Map(sizes.map((s) => [s.name, s]));
  const seen = new Set();
  const table = readme
    .slice(from, to)
    .split('\n')
    .map((line) => {
      const name = /^\| \[`([^`]+)`\]/.exec(line)?.[1];
      const size = name === undefined ? undefined : byName.get(name);
      if (size === undefined) return line;
      seen.add(name);
      return line.replace(/\| [^|]* \|$/, `| ${size.kib} KiB |`);
    })
    .join('\n');
  const missing = sizes.filter((s) => !seen.has(s.name)).map((s) => s.name);
  if (missing.length > 0)
    throw new Error(`README.md: the package table has no row for ${missing.join(', ')}`);
  return readme.slice(0, from) + table + readme.slice(to);
}
