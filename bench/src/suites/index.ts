import type { Suite } from '../harness.ts';
import { mlpSuite } from '../mlp/suite.ts';
import { allocatorSuite } from './allocator.ts';
import { bundleSuite } from './bundle.ts';
import { commandBufferSuite } from './command-buffer.ts';
import { deviceCpuSuite } from './device-cpu.ts';
import { deviceWebGpuSuite } from './device-webgpu.ts';
import { fenceSuite } from './fence.ts';
import { mirrorSuite } from './mirror.ts';
import { multiDeviceSuite } from './multi-device.ts';
import { schedulerSuite } from './scheduler.ts';
import { tensorResidencySuite } from './tensor-residency.ts';

/** Every suite `pnpm bench` knows, in the order `pnpm bench` (no suite) runs them. */
export const suites: readonly Suite[] = [
  allocatorSuite,
  bundleSuite,
  commandBufferSuite,
  deviceCpuSuite,
  deviceWebGpuSuite,
  fenceSuite,
  mirrorSuite,
  mlpSuite,
  multiDeviceSuite,
  schedulerSuite,
  tensorResidencySuite,
];
