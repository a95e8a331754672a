/**
 * `keel demo --trace FILE` on the CPU device (the built CLI, spawned as a user runs it) and the option
 * behind it (`trainMlp`'s `traceSteps`): the file is Chrome trace event JSON that Perfetto opens (every
 * event a complete event with name/ph/ts/dur/pid/tid, finite numbers, dur ≥ 0), with one execute per
 * traced step and one dispatch entry per recorded dispatch of each, named by the MLP's kernel exports;
 * with a device lost inside the traced steps, the file holds each device's part (one pid per device).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromeTraceProblems, traceEventsOf } from '@keel/cts';
import { MLP_CPU_EXPORTS, trainMlp } from '@keel/mlp';
import { afterAll, describe, expect, it } from 'vitest';
import { type CliRun, runCli } from './run-cli';

const kernelNames = new Set(MLP_CPU_EXPORTS.map((e) => e.name));
const tmp = mkdtempSync(path.join(os.tmpdir(), 'keel-trace-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function run(args: string[]): Promise<CliRun> {
  return runCli(args, { cwd: tmp });
}

/** Checks a parsed trace of `steps` MLP steps with `dispatchesPerStep` dispatches each. */
function checkStepTrace(trace: unknown, steps: number, dispatchesPerStep: number): void {
  expect(chromeTraceProblems(trace)).toEqual([]);
  const executes = traceEventsOf(trace, 'queue').filter((e) => e.name === 'queueExecute');
  expect(executes).toHaveLength(steps);
  const dispatches = traceEventsOf(trace, 'dispatch');
  expect(dispatches).toHaveLength(steps * dispatchesPerStep);
  for (const d of dispatches) {
    expect(kernelNames.has(d.name), `dispatch '${d.name}' is an MLP kernel export`).toBe(true);
    expect(d.args?.timing).toBe('cpu-wall');
  }
  // Every step's loss read-back and its queue-ordered arena are there too.
  const ops = traceEventsOf(trace, 'queue');
  expect(ops.filter((e) => e.name === 'queueRead').length).toBeGreaterThanOrEqual(steps);
  expect(ops.filter((e) => e.name === 'queueAlloca').length).toBeGreaterThanOrEqual(steps);
}

describe('keel demo --trace', () => {
  it('trainMlp traceSteps returns the trace of the last steps', async () => {
    const r = await trainMlp({ device: 'cpu', steps: 5, traceSteps: 2, workers: 1 });
    expect(r.trace).toBeDefined();
    checkStepTrace(JSON.parse(JSON.stringify(r.trace)), 2, r.commands.dispatchesPerStep);
    const untraced = await trainMlp({ device: 'cpu', steps: 2, workers: 1 });
    expect(untraced.trace).toBeUndefined();
  }, 60_000);

  it('writes a trace file of the last --trace-steps steps on the CPU device', async () => {
    const file = path.join(tmp, 'step.json');
    const r = await run(['demo', '--steps', '6', '--trace', file, '--trace-steps', '3']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`trace of steps 4-6 written to ${file}`);
    const trace = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    const dispatches = traceEventsOf(trace, 'dispatch').length;
    expect(dispatches % 3).toBe(0);
    checkStepTrace(trace, 3, dispatches / 3);
    expect(dispatches).toBeGreaterThan(0);
  }, 120_000);

  it('a device lost inside the traced steps: the file holds the lost device and its replacement, one pid each', async () => {
    const file = path.join(tmp, 'recovered.json');
    const r = await run([
      'demo',
      '--steps',
      '8',
      '--batch',
      '32',
      '--checkpoint-every',
      '2',
      '--lose-device-at',
      '5',
      '--trace',
      file,
      '--trace-steps',
      '5',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const resumed = Number(/resuming at step (\d+)/.exec(r.stdout)?.[1]);
    expect(resumed).toBeGreaterThanOrEqual(4);
    expect(r.stdout).toContain(`trace of steps 4-8 written to ${file}: `);
    expect(r.stdout).toContain(
      '; 2 devices, one pid each (a device was lost and replaced during these steps',
    );
    const trace = JSON.parse(readFileSync(file, 'utf8')) as { otherData: Record<string, unknown> };
    expect(chromeTraceProblems(trace)).toEqual([]);
    expect(trace.otherData.devices).toBe(2);
    const executes = traceEventsOf(trace, 'queue').filter((e) => e.name === 'queueExecute');
    const byPid = new Map<number, number>();
    for (const e of executes) byPid.set(e.pid, (byPid.get(e.pid) ?? 0) + 1);
    expect(byPid.size).toBe(2);
    // The lost device traced from step 4 to the loss; the replacement every step from where it resumed.
    const [lost, replacement] = [...byPid.entries()].sort(([a], [b]) => a - b).map(([, n]) => n);
    expect(lost).toBeGreaterThanOrEqual(1);
    expect(replacement).toBe(8 - resumed + 1);
  }, 120_000);

  it('is refused with a clear message for a bad --trace-steps', async () => {
    const r = await run(['demo', '--trace', path.join(tmp, 'x.json'), '--trace-steps', '0']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("option '--trace-steps <n>' argument '0' is invalid");
  });
});
