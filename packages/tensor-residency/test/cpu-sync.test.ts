import { afterAll, describe, it } from 'vitest';
import { makeDevice } from './helpers';
import { trainWithKernel } from './kernel-training';
import { lossTurnCases } from './loss-turn-cases';
import { mirrorCases } from './mirror-cases';
import { seedCases } from './seed-cases';
import { streamEvictionCases } from './stream-eviction-cases';

seedCases('cpu-sync');
mirrorCases('cpu-sync');
lossTurnCases('cpu-sync');
streamEvictionCases('cpu-sync');

describe('training with a real kernel on cpu-sync', () => {
  const device = makeDevice('cpu-sync');
  afterAll(async () => {
    await (await device).destroy();
  });
  it('SGD on resident weights: one upload, one readback of the weights', async () => {
    await trainWithKernel(await device);
  });
});
