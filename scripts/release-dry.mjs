#!/usr/bin/env node
/**
 * `pnpm release:dry`: rehearses a release without publishing anything.
 *
 * 1. Copies the workspace (tracked and untracked, not ignored files) to a scratch directory, installs it
 *    offline from the pnpm store, applies the pending changesets there (`changeset version`) and builds.
 * 2. Packs every public package with `pnpm pack` (which rewrites `workspace:` ranges to real versions)
 *    and checks each tarball with publint (strict) and @arethetypeswrong/cli (esm-only profile).
 * 3. Installs the tarballs into two scratch consumer projects outside the workspace (npm, with
 *    `overrides` pointing every @keel package at its tarball so nothing comes from the registry):
 *    one takes only @keel/fence and @keel/command-buffer, one takes the umbrella `keel`. Each runs a
 *    small ESM program and a TypeScript type-check (moduleResolution node16) against the installed types.
 * 4. Prints a table of packed sizes (the README's package table quotes it).
 *
 * Exits non-zero at the first failure. The working tree itself is never modified.
 */
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const keep = process.argv.includes('--keep');
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
  for (const { dir, pkg } of packages) {
    const before = new Set(readdirSync(tarballs));
    run('pnpm', ['pack', '--pack-destination', tarballs], dir);
    const file = readdirSync(tarballs).find((f) => !before.has(f));
    const tgz = join(tarballs, file);
    packed.set(pkg.name, tgz);
    const manifest = JSON.parse(run('tar', ['-xOzf', tgz, 'package/package.json'], root));
    const leftover = JSON.stringify(manifest).includes('workspace:');
    if (leftover) throw new Error(`${pkg.name}: packed package.json still has a workspace: range`);
    run('pnpm', ['exec', 'publint', '--strict', dir], ws);
    run('pnpm', ['exec', 'attw', tgz, '--profile', 'esm-only', '--format', 'ascii', '--no-emoji'], ws);
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
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const overrides = Object.fromEntries([...packed].map(([name, tgz]) => [name, `file:${tgz}`]));
  for (const consumer of ['single-packages', 'umbrella']) {
    const source = join(root, 'scripts', 'release', consumer);
    const dir = join(scratch, `consumer-${consumer}`);
    cpSync(source, dir, { recursive: true });
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    for (const name of Object.keys(pkg.dependencies)) pkg.dependencies[name] = overrides[name];
    pkg.overrides = overrides;
    writeFileSync(join(dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
    run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], dir);
    const out = run(process.execPath, ['main.mjs'], dir);
    log(`consumer ${consumer}: ${out.trim().split('\n').join(' | ')}`);
    run(process.execPath, [tsc, '-p', 'tsconfig.json'], dir);
    log(`consumer ${consumer}: type-check against the installed types ok`);
  }

  // 4. Sizes.
  log('packed sizes:');
  process.stdout.write('| package | version | packed | files |\n| --- | --- | --- | --- |\n');
  for (const s of sizes)
    process.stdout.write(`| \`${s.name}\` | ${s.version} | ${s.kib} KiB | ${s.entries} |\n`);
  log('ok');
} finally {
  if (keep) log(`scratch kept at ${scratch}`);
  else rmSync(scratch, { recursive: true, force: true });
}
