/**
 * Pending changesets stay releasable: each one names only published workspace packages (changesets
 * refuses a changeset that mixes a private, ignored package such as @keel/cts with published ones,
 * which would fail `pnpm release:dry` and the release workflow), with a bump of patch, minor or major
 * and a summary for users.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { examplesDir } from './run-example';

const root = join(examplesDir, '..');

/** name → private flag, for every package.json of the workspace (packages/*, examples, bench). */
function workspacePackages(): Map<string, boolean> {
  const dirs = [
    ...readdirSync(join(root, 'packages')).map((d) => join(root, 'packages', d)),
    join(root, 'examples'),
    join(root, 'bench'),
  ];
  const out = new Map<string, boolean>();
  for (const dir of dirs) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name: string;
        private?: boolean;
      };
      out.set(pkg.name, pkg.private === true);
    } catch {
      // not a package folder
    }
  }
  return out;
}

describe('pending changesets', () => {
  const packages = workspacePackages();
  const files = readdirSync(join(root, '.changeset')).filter((f) => f.endsWith('.md') && f !== 'README.md');

  it.each(files)('%s names only published packages, each with a valid bump and a summary', (file) => {
    const text = readFileSync(join(root, '.changeset', file), 'utf8');
    const match = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(text);
    expect(match, `${file}: no front matter`).not.toBeNull();
    const [, front = '', summary = ''] = match ?? [];
    for (const line of front.split('\n').filter((l) => l.trim() !== '')) {
      const entry = /^"([^"]+)": (patch|minor|major)$/.exec(line.trim());
      expect(entry, `${file}: '${line}' is not "package": patch|minor|major`).not.toBeNull();
      const name = entry?.[1] ?? '';
      expect(packages.has(name), `${file}: ${name} is not a workspace package`).toBe(true);
      expect(packages.get(name), `${file}: ${name} is private (never released)`).toBe(false);
    }
    expect(summary.trim().length, `${file}: empty summary`).toBeGreaterThan(0);
  });
});
