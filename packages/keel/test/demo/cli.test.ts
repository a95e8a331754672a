/**
 * The `keel` CLI's argument handling, without spawning: the program is built with `exitOverride` and
 * captured output, so a bad argument surfaces as a CommanderError and its message.
 */
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { BENCH_RUNNER, findBenchRoot } from '../../src/cli/bench';
import { positiveInteger } from '../../src/cli/demo';
import { createProgram } from '../../src/cli/program';

async function parse(args: string[]): Promise<{ error: unknown; stderr: string }> {
  let stderr = '';
  const program = createProgram((p) =>
    p.exitOverride().configureOutput({
      writeErr: (s) => {
        stderr += s;
      },
      writeOut: () => {},
    }),
  );
  const error = await program.parseAsync(args, { from: 'user' }).then(
    () => undefined,
    (e: unknown) => e,
  );
  return { error, stderr };
}

describe('keel demo arguments', () => {
  it.each([
    [
      ['demo', '--steps', '0'],
      "option '--steps <n>' argument '0' is invalid. expected an integer from 1 to 1000000.",
    ],
    [['demo', '--steps', '-3'], "option '--steps <n>' argument '-3' is invalid"],
    [['demo', '--steps', 'ten'], "option '--steps <n>' argument 'ten' is invalid"],
    [
      ['demo', '--batch', '1.5'],
      "option '--batch <b>' argument '1.5' is invalid. expected an integer from 1 to 16384.",
    ],
    [['demo', '--batch', '100000'], "option '--batch <b>' argument '100000' is invalid"],
    [
      ['demo', '--device', 'tpu'],
      "option '--device <kind>' argument 'tpu' is invalid. Allowed choices are cpu, webgpu.",
    ],
    [['demo', '--bogus'], "unknown option '--bogus'"],
    [
      ['demo', '--checkpoint-every', '0'],
      "option '--checkpoint-every <k>' argument '0' is invalid. expected an integer from 1 to 1000000.",
    ],
    [['demo', '--lose-device-at', 'soon'], "option '--lose-device-at <step>' argument 'soon' is invalid"],
    [
      ['demo', '--devices', 'cpu,tpu'],
      "option '--devices <list>' argument 'cpu,tpu' is invalid. INVALID_ARGUMENT: --devices: 'tpu' names an unknown device kind 'tpu'",
    ],
    [['demo', '--devices', 'cpu,cpu'], "INVALID_ARGUMENT: --devices: 'cpu': the CPU is named twice"],
    [['demo', '--devices', 'webgpu:one'], "INVALID_ARGUMENT: --devices: 'webgpu:one': the adapter index"],
    [['demo', '--devices', 'cpu:9'], "OUT_OF_RANGE: --devices: 'cpu:9' names more than 8 devices"],
  ])('%j is refused with a clear message', async (args, message) => {
    const { error, stderr } = await parse(args);
    expect(error).toBeInstanceOf(CommanderError);
    expect((error as CommanderError).exitCode).toBe(1);
    expect(stderr).toContain(message);
  });

  it('accepts integers in range', () => {
    const steps = positiveInteger(10);
    expect(steps('1')).toBe(1);
    expect(steps('10')).toBe(10);
    expect(() => steps('11')).toThrow(/from 1 to 10/);
    expect(() => steps('')).toThrow(/from 1 to 10/);
    expect(() => steps('1e1')).toThrow(/from 1 to 10/);
  });
});

describe('keel bench', () => {
  it('finds the runner of this checkout from the package and not from outside a checkout', () => {
    const here = path.dirname(fileURLToPath(import.meta.url));
    const root = findBenchRoot([here]);
    expect(root).toBeDefined();
    expect(path.join(root!, BENCH_RUNNER)).toBe(path.resolve(here, '../../../../bench/src/main.ts'));
    expect(findBenchRoot([os.tmpdir()])).toBeUndefined();
  });
});
