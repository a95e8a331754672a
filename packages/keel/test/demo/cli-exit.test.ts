/**
 * How `keel` ends when something outside it ends it (the default, filtered mode: the CLI runs itself
 * as a child): Ctrl-C (SIGINT) exits 130 and SIGTERM 143 (128 + the signal's number, as shells
 * report it), and a reader that goes away (`keel demo | head -1`) ends it quietly with 141 (SIGPIPE's
 * status) instead of an unhandled EPIPE stack trace. Spawns the built CLI (`pnpm build` first).
 */
import { describe, expect, it } from 'vitest';
import { runCli } from './run-cli';

// Long enough never to finish on its own before the test ends it (it is ended after its first step).
const LONG_DEMO = ['demo', '--steps', '100000', '--batch', '8'];

describe('keel exit status', { timeout: 60_000 }, () => {
  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('%s during a demo exits %i', async (signal, status) => {
    let sent = false;
    const r = await runCli(LONG_DEMO, {
      onStdout: (_chunk, child, stdout) => {
        if (!sent && /^step +1\//m.test(stdout)) {
          sent = true;
          child.kill(signal);
        }
      },
    });
    expect(sent, r.stdout).toBe(true);
    expect(r.code, r.stderr).toBe(status);
  });

  it('keel demo | head -1: exits 141 quietly when stdout has no reader any more', async () => {
    const r = await runCli(LONG_DEMO, {
      onStdout: (_chunk, child) => {
        child.stdout.destroy();
      },
    });
    expect(r.code, r.stderr).toBe(141);
    expect(r.stderr).not.toMatch(/EPIPE|Unhandled 'error'|\n\s+at /);
  });
});
