/**
 * The forward-progress guarantee: the same randomized program (fills, updates, copies and dispatches
 * with random dependencies through fences) gives byte-identical buffers on one queue, on four queues
 * with free placement and on four queues with random affinity masks — and equal to a sequential model.
 */
import type { Device, Executable } from '@keel/hal';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Scheduler, targetsOf } from '../src/index';
import { cpuDevice, mixExecutable } from './helpers';
import { BUFFERS, generate, hex, maskFor, model, OPS, runProgram } from './random-program';

describe('forward progress: one queue and many queues compute the same bytes', () => {
  let one: Device;
  let four: Device;
  let oneExe: Executable;
  let fourExe: Executable;

  beforeAll(async () => {
    one = await cpuDevice(1);
    four = await cpuDevice(4);
    oneExe = await mixExecutable(one);
    fourExe = await mixExecutable(four);
  });
  afterAll(async () => {
    await one?.destroy();
    await four?.destroy();
  });

  async function check(seed: number): Promise<void> {
    const ops = generate(seed);
    const expected = model(ops);
    const single = new Scheduler(targetsOf(one));
    const spread = new Scheduler(targetsOf(four));
    const masked = new Scheduler(targetsOf(four));
    const a = await runProgram(one, oneExe, single, ops, false);
    const b = await runProgram(four, fourExe, spread, ops, false);
    const c = await runProgram(four, fourExe, masked, ops, true);
    for (let i = 0; i < BUFFERS; i++) {
      expect(hex(a[i]!), `seed ${seed} buffer ${i}: one queue vs model`).toEqual(hex(expected[i]!));
      expect(hex(b[i]!), `seed ${seed} buffer ${i}: four queues vs one`).toEqual(hex(a[i]!));
      expect(hex(c[i]!), `seed ${seed} buffer ${i}: random masks vs one`).toEqual(hex(a[i]!));
    }
    // Work really was spread, and masks were respected.
    const used = spread.stats().targets.filter((t) => t.submitted > 0).length;
    expect(used, `seed ${seed}: targets used with free placement`).toBeGreaterThan(1);
    expect(single.stats().submitted).toBe(OPS + BUFFERS);
  }

  it('a fixed seed', async () => {
    await check(0x5eed);
  }, 60_000);

  it('random seeds (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 2 ** 31 - 1 }), async (seed) => {
        await check(seed);
      }),
      { numRuns: 4 },
    );
  }, 120_000);

  it('random masks are respected exactly', async () => {
    const ops = generate(7);
    const scheduler = new Scheduler(targetsOf(four), { trace: OPS + BUFFERS });
    await runProgram(four, fourExe, scheduler, ops, true);
    const records = scheduler.trace().slice(0, OPS);
    expect(records).toHaveLength(OPS);
    records.forEach((record, i) => {
      expect(
        (maskFor(ops[i]!, scheduler.allTargets) >>> record.target) & 1,
        `op ${i} placed on target ${record.target} outside mask ${ops[i]!.mask}`,
      ).toBe(1);
    });
  }, 60_000);
});
