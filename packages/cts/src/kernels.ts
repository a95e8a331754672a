/**
 * The kernel set the conformance suite dispatches. The suite owns the ABI (export names, bindings,
 * constants, workgroup sizes and semantics, below); each device package supplies the code in its own
 * executable format through `CtsKernelSources`.
 *
 * All element-wise kernels use a workgroup size of [64, 1, 1]: workgroup x covers elements
 * [64·x, min(n, 64·x + 64)) where n is the last constant.
 *
 * | kernel           | export             | bindings                        | constants                       | effect                          |
 * | ---------------- | ------------------ | ------------------------------- | ------------------------------- | ------------------------------- |
 * | `abs`            | `abs`              | 0: input f32, 1: output f32     | n                               | out[i] = abs(in[i])             |
 * | `scaleAndOffset` | `scale_and_offset` | 0: data f32 (read-write)        | scale (f32 bits), offset (f32 bits), n | data[i] = data[i]·scale + offset |
 * | `workgroupIds`   | `workgroup_ids`    | 0: output u32                   | none (workgroup size [1, 1, 1]) | out[4·l .. 4·l+3] = x, y, z, 0xC0FFEE with l = x + X·(y + Y·z) |
 * | `negateDouble`   | `negate`, `double` | 0: input i32, 1: output i32     | n                               | out[i] = −in[i]; out[i] = 2·in[i] |
 * | `add`            | `add`              | 0: a f32, 1: b f32, 2: out f32  | n                               | out[i] = a[i] + b[i]            |
 */
import type { ExecutableSource, ExportDescriptor } from '@keel/hal';

export type CtsKernelName = 'abs' | 'scaleAndOffset' | 'workgroupIds' | 'negateDouble' | 'add';

/** Elements per workgroup of the element-wise kernels. */
export const CTS_WORKGROUP_SIZE = 64;

/** The marker `workgroup_ids` writes as the fourth word of each workgroup's record. */
export const WORKGROUP_ID_MARKER = 0xc0ffee;

const elementwise = [CTS_WORKGROUP_SIZE, 1, 1] as const;

/** The exports of each kernel, in order (export i of the executable is entry i). */
export const CTS_KERNEL_EXPORTS: Readonly<Record<CtsKernelName, readonly ExportDescriptor[]>> = Object.freeze(
  {
    abs: [{ name: 'abs', bindingCount: 2, constantCount: 1, workgroupSize: elementwise }],
    scaleAndOffset: [
      { name: 'scale_and_offset', bindingCount: 1, constantCount: 3, workgroupSize: elementwise },
    ],
    workgroupIds: [{ name: 'workgroup_ids', bindingCount: 1, constantCount: 0, workgroupSize: [1, 1, 1] }],
    negateDouble: [
      { name: 'negate', bindingCount: 2, constantCount: 1, workgroupSize: elementwise },
      { name: 'double', bindingCount: 2, constantCount: 1, workgroupSize: elementwise },
    ],
    add: [{ name: 'add', bindingCount: 3, constantCount: 1, workgroupSize: elementwise }],
  },
);

/**
 * Supplied by a device package: the executable source (in the device's own format) of CTS kernel
 * `kernel`, declaring exactly `exports` (pass them through as the source's `exports`).
 */
export type CtsKernelSources = (
  kernel: CtsKernelName,
  exports: readonly ExportDescriptor[],
) => ExecutableSource;
