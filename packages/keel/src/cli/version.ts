/**
 * The package's version, for `keel --version`: read at run time from the keel package.json that holds
 * this file (the nearest one above it: `dist/../package.json` in every installed copy, also when run
 * from source), so a release bump needs no rebuild and the printed version is always the installed one.
 */
import { existsSync, readFileSync } from 'node:fs';

/** The version field of the keel package that holds this file. */
export function packageVersion(): string {
  for (let url = new URL('./package.json', import.meta.url); ; ) {
    if (existsSync(url)) {
      const pkg = JSON.parse(readFileSync(url, 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'keel' && typeof pkg.version === 'string') return pkg.version;
    }
    const up = new URL('../package.json', url);
    if (up.href === url.href) throw new Error("keel: cannot find the keel package's package.json");
    url = up;
  }
}
