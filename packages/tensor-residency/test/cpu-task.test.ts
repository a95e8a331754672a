import { afterAll, describe, it } from 'vitest';
import { makeDevice } from './helpers';
import { trainWithKernel } from './kernel-training';
import { lossTurnCases } from './loss-turn-cases';
import { mirrorCases } from './mirror-cases';
import { seedCases } from './seed-cases';
import { streamEvictionCases } from './stream-eviction-cases';

seedCases('cpu-task');
mirrorCases('cpu-task');
lossTurnCases('cpu-task');
streamEvictionCases('cpu-task');

describe('training with a real kernel on cpu-task', () => {
  const device = makeDevice('cpu-task');
  afterAll(async () => {
    await (await device).destroy();
  });
  it('SGD on resident weights: one upload, one readback of the weights', async () => {
    await trainWithKernel(await device);
  });
});
