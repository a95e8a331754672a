/**
 * The CTS kernel set for the CPU device: every CTS executable is the one ES module
 * test/fixtures/cts-kernels.js, whose exported function names are the CTS export names.
 */
import type { CtsKernelSources } from '@keel/cts';

export const CTS_KERNELS_URL = new URL('./fixtures/cts-kernels.js', import.meta.url);

export const cpuCtsKernels: CtsKernelSources = (kernel, exports) => ({
  format: 'js-module',
  url: CTS_KERNELS_URL,
  exports,
  label: `cts ${kernel}`,
});
