/**
 * The repository's structure as DESIGN.md § Packages and their dependencies states it: each package's
 * declared Keel dependencies are those of the table (parsed from docs/DESIGN.md), there are no cycles,
 * no package reaches into another's internals (a Keel import names a declared dependency through one
 * of its `exports` entries, e.g. `@keel/hal/driver`; a relative import stays inside its package), and
 * `src/index.ts` only re-exports. Imports are read with TypeScript's own pre-processor
 * (`ts.preProcessFile`: static, type-only and dynamic imports, re-exports, requires).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { examplesDir } from './run-example';

const root = join(examplesDir, '..');
const packagesDir = join(root, 'packages');

interface Pkg {
  readonly name: string;
  readonly dir: string;
  readonly private: boolean;
  /** Keel packages in dependencies, peerDependencies and optionalDependencies (what ships). */
  readonly deps: readonly string[];
  /** Keel packages in devDependencies. */
  readonly devDeps: readonly string[];
  /** The `exports` subpaths ('.', './driver', ...). */
  readonly exports: readonly string[];
}

const isKeel = (name: string): boolean => name === 'keel' || name.startsWith('@keel/');
const keelKeys = (o: Record<string, string> | undefined): string[] => Object.keys(o ?? {}).filter(isKeel);

function readPackages(): Map<string, Pkg> {
  const pkgs = new Map<string, Pkg>();
  for (const entry of readdirSync(packagesDir)) {
    const dir = join(packagesDir, entry);
    let text: string;
    try {
      text = readFileSync(join(dir, 'package.json'), 'utf8');
    } catch {
      continue;
    }
    const j = JSON.parse(text) as {
      name: string;
      private?: boolean;
      exports?: string | Record<string, unknown>;
      dependencies?: Record<string, string>;
      peerDependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
      devDependencies?: Record<string, string>;
    };
    const deps = new Set([
      ...keelKeys(j.dependencies),
      ...keelKeys(j.peerDependencies),
      ...keelKeys(j.optionalDependencies),
    ]);
    pkgs.set(j.name, {
      name: j.name,
      dir,
      private: j.private === true,
      deps: [...deps].sort(),
      devDeps: keelKeys(j.devDependencies).sort(),
      exports: typeof j.exports === 'object' && j.exports !== null ? Object.keys(j.exports) : ['.'],
    });
  }
  return pkgs;
}

interface Row {
  readonly name: string;
  readonly private: boolean;
  /** The dependency column as written ('no Keel deps', 'hal, fence', 'all of the above', ...). */
  readonly deps: string;
}

/** The table of DESIGN.md § Packages and their dependencies (the fenced block under the heading). */
export function parseDesignTable(design: string): Row[] {
  const section = design.slice(design.indexOf('## Packages and their dependencies'));
  const block = /```\n([\s\S]*?)\n```/.exec(section);
  if (block === null) throw new Error('DESIGN.md: no table under § Packages and their dependencies');
  return block[1]!.split('\n').map((line) => {
    // The name, '(private)' where it is, then the dependency and description columns (2+ spaces apart).
    const m = /^(\S+)\s+(\(private\)\s+)?(\S.*)$/.exec(line.trim());
    const columns = m?.[3]?.split(/\s{2,}/) ?? [];
    if (m === null || !isKeel(m[1]!) || columns.length !== 2) {
      throw new Error(`DESIGN.md table: cannot read '${line}'`);
    }
    return { name: m[1]!, private: m[2] !== undefined, deps: columns[0]! };
  });
}

/**
 * What a row's dependency column allows: `exact` (the named packages; a package may also list what
 * they depend on, as command-buffer lists fence beside hal) or `within` (any non-empty subset).
 * - 'no Keel deps': none; 'hal, fence': those;
 * - 'all of the above': every package above the row except those that are themselves 'all of the
 *   above' (the two devices: webgpu's ditto of cpu's, not a dependency on it);
 * - 'the runtime': within the published packages above the row;
 * - 'all': every other published package.
 */
function allowed(rows: readonly Row[], index: number): { kind: 'exact' | 'within'; names: string[] } {
  const row = rows[index]!;
  const above = rows.slice(0, index);
  switch (row.deps) {
    case 'no Keel deps':
      return { kind: 'exact', names: [] };
    case 'all of the above':
      return { kind: 'exact', names: above.filter((r) => r.deps !== row.deps).map((r) => r.name) };
    case 'the runtime':
      return { kind: 'within', names: above.filter((r) => !r.private).map((r) => r.name) };
    case 'all':
      return { kind: 'exact', names: rows.filter((r) => !r.private && r !== row).map((r) => r.name) };
    default:
      return { kind: 'exact', names: row.deps.split(/,\s*/).map((short) => `@keel/${short}`) };
  }
}

/** Problems with package `name` declaring `declared` against the table (empty when it matches). */
export function checkDeclared(rows: readonly Row[], name: string, declared: readonly string[]): string[] {
  const index = rows.findIndex((r) => r.name === name);
  if (index < 0) return [`${name}: not in DESIGN.md's table`];
  const closure = (names: readonly string[], seen = new Set<string>()): Set<string> => {
    for (const n of names) {
      if (seen.has(n)) continue;
      seen.add(n);
      const i = rows.findIndex((r) => r.name === n);
      if (i >= 0) closure(allowed(rows, i).names, seen);
    }
    return seen;
  };
  const rule = allowed(rows, index);
  const problems: string[] = [];
  if (rule.kind === 'exact') {
    const reach = closure(rule.names);
    for (const n of rule.names) {
      if (!declared.includes(n)) problems.push(`${name}: DESIGN.md says it depends on ${n}, not declared`);
    }
    for (const n of declared) {
      if (!reach.has(n)) problems.push(`${name}: depends on ${n}, which DESIGN.md's table does not give it`);
    }
  } else {
    if (declared.length === 0) problems.push(`${name}: DESIGN.md says it builds on ${rows[index]!.deps}`);
    for (const n of declared) {
      if (!rule.names.includes(n)) problems.push(`${name}: depends on ${n}, outside ${rows[index]!.deps}`);
    }
  }
  return problems;
}

/** Every dependency cycle of `graph` (name → names), as 'a → b → a'. */
export function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const cycles: string[] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (n: string): void => {
    const at = path.indexOf(n);
    if (at >= 0) {
      cycles.push([...path.slice(at), n].join(' → '));
      return;
    }
    if (done.has(n)) return;
    path.push(n);
    for (const d of graph.get(n) ?? []) visit(d);
    path.pop();
    done.add(n);
  };
  for (const n of graph.keys()) visit(n);
  return cycles;
}

/** Source files under `dir` (recursively). */
function sources(dir: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  return entries.flatMap((f) => {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) return sources(p);
    return /\.(ts|mts|cts|tsx|js|mjs|cjs)$/.test(f) ? [p] : [];
  });
}

/**
 * Problems with the imports of `file` (of package `pkg`): a relative import leaving the package, or a
 * Keel import of an undeclared package or of a subpath its `exports` does not offer.
 */
export function checkImports(pkgs: ReadonlyMap<string, Pkg>, pkg: Pkg, file: string, text: string): string[] {
  const problems: string[] = [];
  const where = relative(root, file);
  for (const { fileName: spec } of ts.preProcessFile(text, true, true).importedFiles) {
    if (spec.startsWith('.') || spec.startsWith('/')) {
      const target = resolve(dirname(file), spec);
      if (relative(pkg.dir, target).startsWith('..') || spec.startsWith('/')) {
        problems.push(`${where}: '${spec}' reaches outside ${relative(root, pkg.dir)}`);
      }
      continue;
    }
    const m = /^(@keel\/[^/]+|keel)(\/.*)?$/.exec(spec);
    if (m === null) continue;
    const [, name, sub] = m as unknown as [string, string, string | undefined];
    const target = pkgs.get(name);
    if (target === undefined) {
      problems.push(`${where}: '${spec}' names no package of the repository`);
      continue;
    }
    if (name !== pkg.name && !pkg.deps.includes(name)) {
      problems.push(`${where}: '${spec}': ${name} is not a dependency of ${pkg.name}`);
    }
    if (!target.exports.includes(`.${sub ?? ''}`)) {
      problems.push(
        `${where}: '${spec}' is not an entry of ${name}'s exports (${target.exports.join(', ')})`,
      );
    }
  }
  return problems;
}

/** Statements of a `src/index.ts` other than `export … from '…'` (comments are not statements). */
export function nonReExports(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  return source.statements
    .filter((s) => !(ts.isExportDeclaration(s) && s.moduleSpecifier !== undefined))
    .map((s) => s.getText(source).split('\n')[0]!);
}

const pkgs = readPackages();
const rows = parseDesignTable(readFileSync(join(root, 'docs', 'DESIGN.md'), 'utf8'));

describe('DESIGN.md § Packages and their dependencies', () => {
  it('the table lists every package that ships or is shipped with (and says which is private)', () => {
    expect(rows.length).toBeGreaterThanOrEqual(11);
    for (const row of rows) {
      expect(pkgs.has(row.name), `${row.name} of DESIGN.md's table exists under packages/`).toBe(true);
      expect(pkgs.get(row.name)?.private, `${row.name}: private as the table says`).toBe(row.private);
    }
    // Not in the table: only private test suites that ship nothing and nothing depends on.
    for (const pkg of pkgs.values()) {
      if (rows.some((r) => r.name === pkg.name)) continue;
      expect(pkg.private && pkg.deps.length === 0, `${pkg.name}: not in the table, so private, no deps`).toBe(
        true,
      );
      expect(
        [...pkgs.values()].filter((p) => p.deps.includes(pkg.name) || p.devDeps.includes(pkg.name)),
      ).toEqual([]);
    }
  });

  it("each package declares the dependencies of DESIGN.md's table", () => {
    const problems = rows.flatMap((row) => checkDeclared(rows, row.name, pkgs.get(row.name)?.deps ?? []));
    expect(problems).toEqual([]);
  });

  it('no cycles between packages (dev dependencies included: turbo builds along them)', () => {
    const graph = new Map([...pkgs.values()].map((p) => [p.name, [...p.deps, ...p.devDeps]] as const));
    expect(findCycles(graph)).toEqual([]);
  });

  it("no package reaches into another's internals: imports of declared packages' exports only", () => {
    const files = [...pkgs.values()].flatMap((pkg) =>
      sources(join(pkg.dir, 'src')).map((file) => ({ pkg, file })),
    );
    expect(files.length).toBeGreaterThan(100);
    const problems = files.flatMap(({ pkg, file }) =>
      checkImports(pkgs, pkg, file, readFileSync(file, 'utf8')),
    );
    expect(problems).toEqual([]);
  });

  it('src/index.ts only re-exports', () => {
    const indexes = [...pkgs.values()]
      .map((p) => join(p.dir, 'src', 'index.ts'))
      .filter((f) => {
        try {
          return statSync(f).isFile();
        } catch {
          return false;
        }
      });
    expect(indexes.length).toBeGreaterThanOrEqual(11);
    const problems = indexes.flatMap((f) =>
      nonReExports(f, readFileSync(f, 'utf8')).map((s) => `${relative(root, f)}: ${s}`),
    );
    expect(problems).toEqual([]);
  });
});

describe('the structure checks catch what they look for', () => {
  const design = [
    '## Packages and their dependencies',
    '',
    '```',
    '@keel/fence            no Keel deps       semaphores',
    '@keel/hal              fence              contracts',
    '@keel/command-buffer   hal                recording',
    '@keel/device-cpu       all of the above   CPU backend',
    '@keel/device-webgpu    all of the above   WebGPU backend',
    '@keel/cts   (private)  hal, fence         the suite',
    '@keel/mlp              the runtime        the MLP',
    'keel                   all                umbrella',
    '```',
  ].join('\n');
  const table = parseDesignTable(design);

  it('reads the table and its dependency words', () => {
    expect(table.map((r) => r.name)).toContain('@keel/cts');
    expect(table.find((r) => r.name === '@keel/cts')).toEqual({
      name: '@keel/cts',
      private: true,
      deps: 'hal, fence',
    });
    const core = ['@keel/command-buffer', '@keel/fence', '@keel/hal'];
    expect(checkDeclared(table, '@keel/device-webgpu', core)).toEqual([]);
    expect(checkDeclared(table, '@keel/device-webgpu', [...core, '@keel/device-cpu'])).toHaveLength(1);
    expect(checkDeclared(table, '@keel/device-cpu', ['@keel/hal'])).toHaveLength(2);
    // Listing what a named dependency brings (fence, beside hal) is fine; anything else is not.
    expect(checkDeclared(table, '@keel/command-buffer', ['@keel/fence', '@keel/hal'])).toEqual([]);
    expect(checkDeclared(table, '@keel/command-buffer', ['@keel/hal', '@keel/cts'])).toHaveLength(1);
    expect(checkDeclared(table, '@keel/fence', ['@keel/hal'])).toHaveLength(1);
    expect(checkDeclared(table, '@keel/mlp', ['@keel/hal', '@keel/device-cpu'])).toEqual([]);
    expect(checkDeclared(table, '@keel/mlp', ['@keel/cts'])).toHaveLength(1);
    expect(checkDeclared(table, 'keel', core)).toHaveLength(3);
  });

  it('finds a cycle', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    expect(findCycles(graph)).toEqual(['a → b → c → a']);
    expect(findCycles(new Map([['a', ['b']]]))).toEqual([]);
  });

  it('flags deep, undeclared and escaping imports, and index statements that are not re-exports', () => {
    const cb = pkgs.get('@keel/command-buffer')!;
    const file = join(cb.dir, 'src', 'x.ts');
    const text = [
      "import { a } from '@keel/hal';",
      "import type { B } from '@keel/hal/driver';",
      "import { c } from './local';",
      "export { d } from '@keel/hal/src/buffer';",
      "const e = await import('@keel/allocator');",
      "import { f } from '../../hal/src/buffer';",
      "import { g } from 'node:fs';",
    ].join('\n');
    expect(checkImports(pkgs, cb, file, text)).toEqual([
      "packages/command-buffer/src/x.ts: '@keel/hal/src/buffer' is not an entry of @keel/hal's exports (., ./driver, ./package.json)",
      "packages/command-buffer/src/x.ts: '@keel/allocator': @keel/allocator is not a dependency of @keel/command-buffer",
      "packages/command-buffer/src/x.ts: '../../hal/src/buffer' reaches outside packages/command-buffer",
    ]);
    const index = [
      '/** A package. */',
      "export { a } from './a';",
      "export type { B } from './b';",
      "export * from './c';",
      '// a comment',
      "import { d } from './d';",
      'export { d };',
      'export const e = 1;',
    ].join('\n');
    expect(nonReExports('index.ts', index)).toEqual([
      "import { d } from './d';",
      'export { d };',
      'export const e = 1;',
    ]);
  });
});
