/**
 * No per-call allocation on warm hot paths (DESIGN.md code standards; § Packages: the driver kit's
 * pooled operation record): a warm `queueFill` and a warm `queueExecute` of a reusable command buffer
 * with a binding table grow the JavaScript heap by (almost) nothing, in sync and in task mode. Before the
 * CPU device pooled its records they cost 650–1 900 bytes each (a record and its callback, a Set
 * entry's churn, arrays of plans, tables and retained buffers, a table snapshot, typed-array views).
 *
 * Measured in a child process (fixtures/alloc-per-op.mjs) with an exposed gc and a young generation
 * large enough that no scavenge hides the growth; see the fixture for what each case measures. Against
 * the built dist.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const FIXTURE = fileURLToPath(new URL('./fixtures/alloc-per-op.mjs', import.meta.url));
/** Bytes of heap growth per operation allowed (the measurement itself costs ~4; one object is ≥ 16). */
const BOUND = 24;

interface CaseResult {
  bytesPerOp: number | null;
  rounds: number;
}

describe('device-cpu: warm queue operations allocate nothing', () => {
  it('queueFill and a reusable queueExecute, sync and task mode', () => {
    const child = spawnSync(
      process.execPath,
      ['--expose-gc', '--min-semi-space-size=64', '--max-semi-space-size=64', FIXTURE],
      { encoding: 'utf8', timeout: 120_000 },
    );
    expect(child.status, child.stderr).toBe(0);
    const lines = child.stdout.trim().split('\n');
    const results = JSON.parse(lines[lines.length - 1]!) as Record<string, CaseResult>;
    expect(Object.keys(results).sort()).toEqual(['sync execute', 'sync fill', 'task execute', 'task fill']);
    for (const [name, { bytesPerOp, rounds }] of Object.entries(results)) {
      expect(rounds, `${name}: rounds without a garbage collection`).toBeGreaterThanOrEqual(3);
      expect(bytesPerOp, `${name}: bytes per warm operation`).toBeLessThan(BOUND);
    }
  }, 150_000);
});
