#!/usr/bin/env node
// Keeps the code in the docs runnable. Every fenced block in the Markdown docs (README.md,
// CONTRIBUTING.md, examples/README.md, packages/*/README.md, packages/*/src/**/README.md) is one of:
//   - a runnable example included by reference: the line before the fence is
//     `<!-- example: examples/<file> -->` and the block equals that file (the examples test runs it);
//   - an excerpt of source: `<!-- excerpt: <path> -->` and the block's lines (trimmed, blank lines
//     ignored) appear in that file, consecutively;
//   - not code, and marked so: ```sh, ```bash, ```console or ```text.
// A file an example loads from beside itself (`new URL('./kernels/x.mjs', import.meta.url)`) is shown in
// the same doc as an example block of its own, so that a reader who copies the doc has all of it.
// Relative links must name files inside the repository. A published package's README is also read
// on npm, where only the package's files exist: its relative links must stay inside the package and
// name files it publishes (`files` in package.json); anything else is linked by absolute URL into the
// repository (`<repository>/blob/main/<path>`, the URL of package.json's `repository`), and such URLs,
// in every doc, must name a file or folder that exists. `node scripts/readme-blocks.mjs` lists the
// problems (exit 1 if any); `--write` first copies every example file into its block.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const NON_CODE = new Set(['sh', 'bash', 'console', 'text']);
const MARKER = /^<!--\s*(example|excerpt):\s*(\S+)\s*-->$/;
const FENCE = /^```([\w-]*)\s*$/;

/** The Markdown files whose blocks are checked, relative to `root`. */
export function docFiles(root) {
  const files = ['README.md', 'CONTRIBUTING.md', 'examples/README.md'];
  for (const pkg of readdirSync(join(root, 'packages')).sort()) {
    files.push(`packages/${pkg}/README.md`);
    const walk = (dir) => {
      if (!existsSync(join(root, dir))) return;
      for (const entry of readdirSync(join(root, dir)).sort()) {
        const path = `${dir}/${entry}`;
        if (statSync(join(root, path)).isDirectory()) walk(path);
        else if (entry === 'README.md') files.push(path);
      }
    };
    walk(`packages/${pkg}/src`);
  }
  return files.filter((f) => existsSync(join(root, f)));
}

/** The fenced blocks of a Markdown text: language, content, marker, and line numbers (1-based). */
export function blocksOf(text) {
  const lines = text.split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]);
    if (!open) continue;
    let end = i + 1;
    while (end < lines.length && lines[end] !== '```') end++;
    let before = i - 1;
    while (before >= 0 && lines[before].trim() === '') before--;
    const marker = before >= 0 ? MARKER.exec(lines[before].trim()) : null;
    blocks.push({
      lang: open[1],
      start: i + 1,
      end: end + 1,
      content: lines.slice(i + 1, end).join('\n'),
      marker: marker ? { kind: marker[1], path: marker[2] } : undefined,
    });
    i = end;
  }
  return blocks;
}

const squash = (text) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');

/** Repository paths of the files an example at `path` loads with `new URL('./…', import.meta.url)`. */
function filesBeside(path, content) {
  const files = [];
  for (const m of content.matchAll(/new URL\(\s*(['"`])(\.{1,2}\/[^'"`]+)\1\s*,\s*import\.meta\.url\s*\)/g)) {
    files.push(join(dirname(path), m[2]).split('\\').join('/'));
  }
  return files;
}

function containsRun(haystack, needle) {
  if (needle.length === 0) return false;
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

/**
 * The published package whose README `file` is (`packages/<pkg>/README.md` of a package.json that is
 * not private): its folder, its repository's web URL and its `files` entries; else undefined.
 */
function publishedPackage(root, file) {
  const m = /^packages\/([^/]+)\/README\.md$/.exec(file);
  if (!m) return undefined;
  const manifest = join(root, 'packages', m[1], 'package.json');
  if (!existsSync(manifest)) return undefined;
  const pkg = JSON.parse(readFileSync(manifest, 'utf8'));
  if (pkg.private) return undefined;
  return { dir: `packages/${m[1]}`, repository: repositoryUrl(pkg), files: pkg.files };
}

/** "git+https://github.com/o/r.git" (package.json `repository`) → "https://github.com/o/r". */
function repositoryUrl(pkg) {
  const url = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url;
  if (typeof url !== 'string') return undefined;
  return url.replace(/^git\+/, '').replace(/\.git$/, '');
}

/** The repository's web URL, from the first package.json under packages/ that names one. */
function rootRepositoryUrl(root) {
  for (const dir of readdirSync(join(root, 'packages')).sort()) {
    const manifest = join(root, 'packages', dir, 'package.json');
    if (!existsSync(manifest)) continue;
    const url = repositoryUrl(JSON.parse(readFileSync(manifest, 'utf8')));
    if (url !== undefined) return url;
  }
  return undefined;
}

/** Whether npm publishes `path` (relative to the package folder) given package.json `files`. */
function isPublished(path, files) {
  if (/^(README|LICENSE|LICENCE|CHANGELOG)(\.[a-z]+)?$/i.test(path) || path === 'package.json') return true;
  if (!Array.isArray(files)) return true;
  return files.some((entry) => !entry.startsWith('!') && (path === entry || path.startsWith(`${entry}/`)));
}

/** Problems of one doc (`file` relative to `root`), as "file:line: what" strings. */
export function checkDoc(root, file, text = readFileSync(join(root, file), 'utf8')) {
  const problems = [];
  const blocks = blocksOf(text);
  const shown = new Set(blocks.filter((b) => b.marker?.kind === 'example').map((b) => b.marker.path));
  for (const b of blocks) {
    const at = `${file}:${b.start}`;
    if (b.marker === undefined) {
      if (!NON_CODE.has(b.lang)) {
        problems.push(
          `${at}: a \`\`\`${b.lang} block with no <!-- example: --> or <!-- excerpt: --> marker ` +
            `(mark non-code blocks \`\`\`sh or \`\`\`text)`,
        );
      }
      continue;
    }
    const target = resolve(root, b.marker.path);
    if (!target.startsWith(`${resolve(root)}/`) || !existsSync(target)) {
      problems.push(`${at}: ${b.marker.kind} ${b.marker.path} does not exist in the repository`);
      continue;
    }
    const source = readFileSync(target, 'utf8');
    if (b.marker.kind === 'example') {
      for (const beside of filesBeside(b.marker.path, b.content)) {
        if (!shown.has(beside))
          problems.push(
            `${at}: the example loads ${beside}, which this doc does not show (add it as an example block)`,
          );
      }
      if (!b.marker.path.startsWith('examples/')) problems.push(`${at}: examples live in examples/`);
      else if (b.content.trimEnd() !== source.trimEnd()) {
        problems.push(
          `${at}: block differs from ${b.marker.path} (run node scripts/readme-blocks.mjs --write)`,
        );
      }
    } else if (!containsRun(squash(source), squash(b.content))) {
      problems.push(`${at}: block is not an excerpt of ${b.marker.path}`);
    }
  }
  // Relative links must stay inside the repository and name something that exists; a published
  // package's README links only to its own published files (npm shows nothing else). Absolute links
  // into the repository must name something that exists.
  const dir = dirname(join(root, file));
  const published = publishedPackage(root, file);
  const repository = published?.repository ?? rootRepositoryUrl(root);
  for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const href = m[1];
    const line = text.slice(0, m.index).split('\n').length;
    if (href.startsWith('#')) continue;
    if (/^[a-z]+:/i.test(href)) {
      const prefix = repository === undefined ? undefined : `${repository}/`;
      const inRepo =
        prefix !== undefined && href.startsWith(prefix)
          ? /^(?:blob|tree)\/main\/([^#?]*)/.exec(href.slice(prefix.length))
          : null;
      if (inRepo && !existsSync(join(root, inRepo[1])))
        problems.push(`${file}:${line}: link ${href} names nothing in the repository`);
      continue;
    }
    const target = resolve(dir, href.split('#')[0]);
    if (!target.startsWith(resolve(root))) {
      problems.push(`${file}:${line}: link ${href} points outside the repository`);
      continue;
    }
    if (!existsSync(target)) {
      problems.push(`${file}:${line}: link ${href} names nothing`);
      continue;
    }
    if (published !== undefined) {
      const inPackage = relative(resolve(root, published.dir), target);
      if (inPackage.startsWith('..') || !isPublished(inPackage.split('\\').join('/'), published.files)) {
        const path = relative(resolve(root), target).split('\\').join('/');
        problems.push(
          `${file}:${line}: link ${href} works only in the repository (npm shows the package's published files): link ${repository ?? '<repository>'}/blob/main/${path}${href.includes('#') ? href.slice(href.indexOf('#')) : ''} instead`,
        );
      }
    }
  }
  return problems;
}

/** Copies each example file into the block that references it. Returns the files changed. */
export function syncDocs(root) {
  const changed = [];
  for (const file of docFiles(root)) {
    const text = readFileSync(join(root, file), 'utf8');
    const lines = text.split('\n');
    for (const b of blocksOf(text).reverse()) {
      if (b.marker?.kind !== 'example' || !existsSync(join(root, b.marker.path))) continue;
      const body = readFileSync(join(root, b.marker.path), 'utf8').trimEnd().split('\n');
      lines.splice(b.start, b.end - b.start - 1, ...body);
    }
    const next = lines.join('\n');
    if (next !== text) {
      writeFileSync(join(root, file), next);
      changed.push(file);
    }
  }
  return changed;
}

export function checkDocs(root) {
  return docFiles(root).flatMap((file) => checkDoc(root, file));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  if (process.argv.includes('--write')) {
    for (const f of syncDocs(root)) console.log(`updated ${relative(root, join(root, f))}`);
  }
  const problems = checkDocs(root);
  for (const p of problems) console.error(p);
  process.exit(problems.length === 0 ? 0 : 1);
}
