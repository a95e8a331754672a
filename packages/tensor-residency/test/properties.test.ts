/**
 * Property (fast-check): random sequences of reads and writes on random locations keep every tensor
 * equal to a host-only model and the counters consistent (see residency-model.ts).
 */
import { createCpuDevice } from '@keel/device-cpu';
import fc from 'fast-check';
import { afterAll, describe, it } from 'vitest';
import { BYTES, op, run } from './residency-model';

describe('random reads and writes match a host-only model', () => {
  const devices = [
    createCpuDevice({ mode: 'sync', queues: 2, label: 'A' }),
    createCpuDevice({ mode: 'sync', queues: 1, label: 'B' }),
  ];
  afterAll(async () => {
    for (const d of devices) await d.destroy();
  });

  it('unlimited budget: data equal, counters exactly as predicted', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 40 }), (ops) => run(ops, devices, undefined)),
      { numRuns: 150 },
    );
  });

  it('a budget of two tensors: evictions and write-backs lose nothing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 40 }), (ops) => run(ops, devices, 2 * BYTES)),
      { numRuns: 150 },
    );
  });
});
