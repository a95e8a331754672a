export { CpuDevice, type CpuDeviceMode, type CpuDeviceOptions } from './cpu-device';
export { createCpuDevice } from './create-cpu-device';
export type { Kernel, KernelBinding, KernelContext } from './kernel-abi';
