/**
 * Process-level guarantees on Dawn, checked in child processes against the built dist (fixtures/):
 * destroying a device with staging maps in flight, then collecting garbage, neither crashes nor hangs
 * the process; and failures of GPU work reach the operations as KeelErrors without printing anything
 * on stderr.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { probeWebGpu } from './webgpu-probe';

const probe = await probeWebGpu();
const dist = fileURLToPath(new URL('../dist/index.node.js', import.meta.url));

function fixture(name: string): string {
  return fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
}

/** stderr without Dawn's start-up notices about limits it lowered (printed before any Keel code runs). */
function keelStderr(stderr: string): string {
  return stderr
    .split('\n')
    .filter((line) => line.trim() !== '' && !/artificially reduced/.test(line))
    .join('\n');
}

describe.skipIf(!probe.available)(
  `@keel/device-webgpu processes${probe.available ? '' : ` (${probe.reason})`}`,
  () => {
    it('has a built dist to run the fixtures against', () => {
      expect(existsSync(dist)).toBe(true);
    });

    it('destroy() right after a write (staging re-mapping) or during a read, then gc: exits 0, repeatedly', () => {
      for (let run = 0; run < 3; run++) {
        const child = spawnSync(process.execPath, ['--expose-gc', fixture('destroy-in-flight.mjs'), '8'], {
          encoding: 'utf8',
          timeout: 60_000,
        });
        expect({ status: child.status, signal: child.signal, stdout: child.stdout }).toEqual({
          status: 0,
          signal: null,
          stdout: 'done\n',
        });
        expect(keelStderr(child.stderr)).toBe('');
      }
    }, 200_000);

    it('GPU errors reach the operations as KeelErrors and nothing is printed on stderr', () => {
      const child = spawnSync(process.execPath, [fixture('gpu-errors.mjs')], {
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(child.status).toBe(0);
      expect(JSON.parse(child.stdout)).toEqual({
        validation: 'INVALID_ARGUMENT+cause',
        tooLarge: 'INVALID_ARGUMENT',
        indirect: 'OUT_OF_RANGE',
        wgsl: 'INVALID_ARGUMENT',
        after: 'OK',
      });
      expect(keelStderr(child.stderr)).toBe('');
    }, 100_000);
  },
);
