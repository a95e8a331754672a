/**
 * The docs cannot rot: every fenced block in the READMEs is an example file included by reference (and
 * run by examples.test.ts), an excerpt of source that still exists verbatim, or explicitly marked as
 * not code; relative links stay inside the repository; docs/DESIGN.md is the contract beside the
 * repository, unchanged. The checker (scripts/readme-blocks.mjs) is exercised on broken input too.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// A plain .mjs script (no type declarations): its functions are cast below.
import { checkDoc, checkDocs, docFiles } from '../../scripts/readme-blocks.mjs';
import { examplesDir } from './run-example';

const root = join(examplesDir, '..');
type Check = (root: string, file: string, text?: string) => string[];
const check = checkDoc as Check;
const readExample = (path: string) => readFileSync(join(root, path), 'utf8').trimEnd();

describe('README code blocks', () => {
  it('every block of every README is an example, an excerpt or marked as not code', () => {
    const files = (docFiles as (root: string) => string[])(root);
    expect(files).toContain('README.md');
    expect(files).toContain('packages/fence/README.md');
    expect(files).toContain('examples/README.md');
    expect((checkDocs as (root: string) => string[])(root)).toEqual([]);
  });

  it('examples/README.md lists every example', () => {
    const index = readFileSync(join(examplesDir, 'README.md'), 'utf8');
    const files = readdirSync(examplesDir).filter((f) => f.endsWith('.mjs'));
    expect(files.length).toBeGreaterThanOrEqual(6);
    for (const file of [...files, 'browser/index.html']) expect(index).toContain(`](${file})`);
  });

  it('the checker reports an unmarked block, a stale example, a stale excerpt and an outside link', () => {
    const text = [
      '```ts',
      'const x = undefinedThing;',
      '```',
      '<!-- example: examples/fence.mjs -->',
      '```js',
      'console.log("not the file");',
      '```',
      '<!-- excerpt: packages/hal/src/device.ts -->',
      '```ts',
      'queueTeleport(): void;',
      '```',
      '```sh',
      'pnpm test',
      '```',
      'See [the design](../shared/DESIGN.md) and [nothing](docs/missing.md).',
    ].join('\n');
    const problems = check(root, 'README.md', text);
    expect(problems).toHaveLength(5);
    expect(problems[0]).toMatch(/README\.md:1: a ```ts block with no <!-- example: -->/);
    expect(problems[1]).toMatch(/README\.md:5: block differs from examples\/fence\.mjs/);
    expect(problems[2]).toMatch(/README\.md:9: block is not an excerpt of packages\/hal\/src\/device\.ts/);
    expect(problems[3]).toMatch(/link \.\.\/shared\/DESIGN\.md points outside the repository/);
    expect(problems[4]).toMatch(/link docs\/missing\.md names nothing/);
  });

  it('the checker reports an example whose kernel file beside it the doc does not show', () => {
    const fence = (path: string) => [`<!-- example: ${path} -->`, '```js', readExample(path), '```'];
    const without = fence('examples/residency.mjs').join('\n');
    const problems = check(root, 'README.md', without);
    expect(problems).toEqual([
      'README.md:2: the example loads examples/kernels/add-scalar.mjs, which this doc does not show (add it as an example block)',
    ]);
    const withKernel = [...fence('examples/residency.mjs'), ...fence('examples/kernels/add-scalar.mjs')];
    expect(check(root, 'README.md', withKernel.join('\n'))).toEqual([]);
  });

  it('keeps links of published package READMEs working on npm: absolute URLs into the repository', () => {
    const repo = 'https://github.com/keel-runtime/keel';
    const text = [
      'The [design](../../docs/DESIGN.md), [the hal](../hal/README.md#options), [source](src/index.ts),',
      `[design](${repo}/blob/main/docs/DESIGN.md), [folder](${repo}/tree/main/examples),`,
      `[gone](${repo}/blob/main/docs/GONE.md), [shipped](LICENSE), [section](#install).`,
    ].join('\n');
    const problems = check(root, 'packages/keel/README.md', text);
    expect(problems).toHaveLength(4);
    expect(problems[0]).toMatch(
      /link \.\.\/\.\.\/docs\/DESIGN\.md works only in the repository .*: link https:\/\/github\.com\/keel-runtime\/keel\/blob\/main\/docs\/DESIGN\.md instead/,
    );
    expect(problems[1]).toMatch(
      /link \.\.\/hal\/README\.md#options works only in the repository .*packages\/hal\/README\.md#options instead/,
    );
    expect(problems[2]).toMatch(/link src\/index\.ts works only in the repository/);
    expect(problems[3]).toMatch(
      /link https:\/\/github\.com\/keel-runtime\/keel\/blob\/main\/docs\/GONE\.md names nothing in the repository/,
    );
    // The repository's own docs (not published) may link relatively.
    expect(check(root, 'CONTRIBUTING.md', 'See [the design](docs/DESIGN.md).')).toEqual([]);
  });
});

describe('docs/DESIGN.md', () => {
  it('is the contract kept beside the repository, unchanged', (ctx) => {
    const shared = join(root, '..', 'shared', 'DESIGN.md');
    const copy = readFileSync(join(root, 'docs', 'DESIGN.md'), 'utf8');
    expect(copy).toMatch(/^# Keel: design and contracts/);
    if (!existsSync(shared)) ctx.skip(`no ${shared} beside this checkout: nothing to compare with`);
    expect(copy).toBe(readFileSync(shared, 'utf8'));
  });
});

describe('API reference (typedoc.json)', () => {
  it('documents every published package from its src/index.ts, without @internal members', () => {
    const config = JSON.parse(readFileSync(join(root, 'typedoc.json'), 'utf8'));
    const published = readdirSync(join(root, 'packages'))
      .filter((dir) => !JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8')).private)
      .map((dir) => `packages/${dir}`)
      .sort();
    expect([...config.entryPoints].sort()).toEqual(published);
    expect(config.entryPointStrategy).toBe('packages');
    expect(config.packageOptions.entryPoints).toEqual(['src/index.ts']);
    expect(config.excludeInternal).toBe(true);
    expect(config.packageOptions.excludeInternal).toBe(true);
    expect(config.packageOptions.validation.notDocumented).toBe(true);
    expect(config.out).toBe('docs/api');
    const ignored = readFileSync(join(root, '.gitignore'), 'utf8').split('\n');
    expect(ignored).toContain('docs/api/');
  });
});
