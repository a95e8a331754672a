/**
 * Where a browser bundle's bytes come from, source file by source file: `node bench/src/bundle-breakdown.ts
 * [ENTRY] [TOP]` (run with `pnpm -s tsx`) bundles ENTRY (default: `export * from '@keel/device-cpu';`)
 * the way `pnpm bench bundle` does (esbuild, browser, ESM, minified) but from the packages' TypeScript
 * sources, each `platform/<name>` import resolved to its `.browser.ts` file as the browser build does,
 * and prints the gzip size, the minified bytes per package and the TOP (default 40) largest files. A tool
 * for size work; the budgets themselves are measured from the built packages by `pnpm bench bundle`.
 *
 * `--without a.ts,b.ts` and `--no-messages` also print what the bundle would weigh without those source
 * files (paths as listed, e.g. `hal/src/driver/trace-recorder.ts`: their regions cut from the bundle) and
 * without message text (every string literal or template text longer than 12 characters emptied): an
 * upper bound on what dropping a feature or shortening every message could save, not a build anyone
 * ships (what is cut is not replaced, so the remainder would not run).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import * as esbuild from 'esbuild';
import ts from 'typescript';

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

const flags = process.argv.slice(2);
const flagValue = (name: string): string | undefined => {
  const at = flags.indexOf(name);
  return at < 0 ? undefined : flags.splice(at, 2)[1];
};
const without = (flagValue('--without') ?? '').split(',').filter((f) => f !== '');
const noMessages = flags.includes('--no-messages');
const positional = flags.filter((f) => f !== '--no-messages');
const entry = positional[0] ?? "export * from '@keel/device-cpu';";
const top = Number(positional[1] ?? 40);

const keelSources: esbuild.Plugin = {
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
};

const buildOptions = {
  stdin: {
    contents: entry,
    resolveDir: path.join(root, 'bench'),
    loader: 'js' as const,
    sourcefile: 'entry.js',
  },
  bundle: true,
  platform: 'browser' as const,
  format: 'esm' as const,
  write: false as const,
  logLevel: 'silent',
  outdir: path.join(root, 'bench', '.bundle-out'),
  plugins: [keelSources],
} satisfies esbuild.BuildOptions;
const result = await esbuild.build({ ...buildOptions, minify: true, metafile: true });

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

/** True when a `/` after a token of this kind divides (else it starts a regular expression). */
function endsExpression(kind: ts.SyntaxKind): boolean {
  return (
    kind === ts.SyntaxKind.Identifier ||
    kind === ts.SyntaxKind.NumericLiteral ||
    kind === ts.SyntaxKind.StringLiteral ||
    kind === ts.SyntaxKind.CloseParenToken ||
    kind === ts.SyntaxKind.CloseBracketToken ||
    kind === ts.SyntaxKind.CloseBraceToken ||
    kind === ts.SyntaxKind.NoSubstitutionTemplateLiteral ||
    kind === ts.SyntaxKind.TemplateTail ||
    kind === ts.SyntaxKind.PrivateIdentifier ||
    kind === ts.SyntaxKind.ThisKeyword ||
    kind === ts.SyntaxKind.PlusPlusToken ||
    kind === ts.SyntaxKind.MinusMinusToken
  );
}

/** Empties string literals and template text longer than 12 characters (TypeScript's scanner finds them). */
function withoutMessages(code: string): string {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, code);
  const cuts: [number, number, string][] = [];
  const templateKinds = new Set([
    ts.SyntaxKind.NoSubstitutionTemplateLiteral,
    ts.SyntaxKind.TemplateHead,
    ts.SyntaxKind.TemplateMiddle,
    ts.SyntaxKind.TemplateTail,
  ]);
  // Brace depths at which a template substitution is open: its `}` resumes the template's text.
  const substitutions: number[] = [];
  let depth = 0;
  let previous = ts.SyntaxKind.Unknown;
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    if (kind === ts.SyntaxKind.OpenBraceToken) depth++;
    else if (kind === ts.SyntaxKind.CloseBraceToken) {
      if (substitutions[substitutions.length - 1] === depth) {
        substitutions.pop();
        kind = scanner.reScanTemplateToken(false);
      } else depth--;
    } else if (
      (kind === ts.SyntaxKind.SlashToken || kind === ts.SyntaxKind.SlashEqualsToken) &&
      !endsExpression(previous)
    ) {
      kind = scanner.reScanSlashToken(); // a regular expression literal, not a division
    }
    if (kind === ts.SyntaxKind.TemplateHead || kind === ts.SyntaxKind.TemplateMiddle)
      substitutions.push(depth);
    previous = kind;
    const start = scanner.getTokenStart();
    const end = scanner.getTokenEnd();
    if (end - start <= 12) continue;
    if (kind === ts.SyntaxKind.StringLiteral) cuts.push([start, end, '""']);
    else if (templateKinds.has(kind)) {
      const open =
        kind === ts.SyntaxKind.NoSubstitutionTemplateLiteral || kind === ts.SyntaxKind.TemplateHead
          ? '`'
          : '}';
      const close =
        kind === ts.SyntaxKind.NoSubstitutionTemplateLiteral || kind === ts.SyntaxKind.TemplateTail
          ? '`'
          : '${';
      cuts.push([start, end, `${open}${close}`]);
    }
  }
  let out = code;
  for (const [start, end, text] of cuts.reverse()) out = out.slice(0, start) + text + out.slice(end);
  return out;
}

if (without.length > 0 || noMessages) {
  // Regions per source file: esbuild marks each with a `// packages/...` comment when whitespace stays.
  const readable = await esbuild.build({ ...buildOptions, minifySyntax: true, minifyIdentifiers: true });
  const code = readable.outputFiles[0]?.text ?? '';
  const regions = code.split(/^(?=\/\/ (?:packages|node_modules)\/)/m);
  const missing = without.filter((f) => !regions.some((r) => r.startsWith(`// packages/${f}\n`)));
  if (missing.length > 0) throw new Error(`bundle-breakdown: not in the bundle: ${missing.join(', ')}`);
  let kept = regions.filter((r) => !without.some((f) => r.startsWith(`// packages/${f}\n`))).join('');
  if (noMessages) kept = withoutMessages(kept);
  const minified = await esbuild.transform(kept, { minifyWhitespace: true, loader: 'js' });
  const what = [
    without.length > 0 ? `without ${without.join(', ')}` : '',
    noMessages ? 'without message text' : '',
  ]
    .filter((w) => w !== '')
    .join(', ');
  console.log(`  ${what}: ${(gzipSync(minified.code, { level: 9 }).length / 1024).toFixed(2)} KiB gzip`);
}
