/**
 * The conformance suite's kernel set in WGSL (see @keel/cts kernels.ts for the ABI). Element-wise
 * kernels take n as their last constant and cover element i = global invocation x. Every access is
 * also guarded by `arrayLength`: WGSL makes out-of-bounds stores land anywhere inside the binding (or
 * nowhere), and a binding may be shorter than n (a sub-range of a table entry).
 */
import type { ExecutableSource, ExportDescriptor } from '@keel/hal';

const ABS = /* wgsl */ `
struct C { n: u32 }
@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;
@group(1) @binding(0) var<uniform> c: C;
@compute @workgroup_size(64)
fn abs(@builtin(global_invocation_id) g: vec3<u32>) {
  if (g.x < c.n && g.x < arrayLength(&input) && g.x < arrayLength(&output)) {
    output[g.x] = bitcast<f32>(bitcast<u32>(input[g.x]) & 0x7fffffffu);
  }
}
`;

const SCALE_AND_OFFSET = /* wgsl */ `
struct C { scale: f32, offset: f32, n: u32 }
@group(0) @binding(0) var<storage, read_write> data: array<f32>;
@group(1) @binding(0) var<uniform> c: C;
@compute @workgroup_size(64)
fn scale_and_offset(@builtin(global_invocation_id) g: vec3<u32>) {
  if (g.x < c.n && g.x < arrayLength(&data)) { data[g.x] = data[g.x] * c.scale + c.offset; }
}
`;

const WORKGROUP_IDS = /* wgsl */ `
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(1)
fn workgroup_ids(@builtin(workgroup_id) id: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {
  let l = id.x + n.x * (id.y + n.y * id.z);
  if (4u * l + 3u >= arrayLength(&out)) { return; }
  out[4u * l] = id.x;
  out[4u * l + 1u] = id.y;
  out[4u * l + 2u] = id.z;
  out[4u * l + 3u] = 0xC0FFEEu;
}
`;

const NEGATE_DOUBLE = /* wgsl */ `
struct C { n: u32 }
@group(0) @binding(0) var<storage, read> input: array<i32>;
@group(0) @binding(1) var<storage, read_write> output: array<i32>;
@group(1) @binding(0) var<uniform> c: C;
@compute @workgroup_size(64)
fn negate(@builtin(global_invocation_id) g: vec3<u32>) {
  if (g.x < c.n && g.x < arrayLength(&input) && g.x < arrayLength(&output)) { output[g.x] = -input[g.x]; }
}
@compute @workgroup_size(64)
fn double(@builtin(global_invocation_id) g: vec3<u32>) {
  if (g.x < c.n && g.x < arrayLength(&input) && g.x < arrayLength(&output)) { output[g.x] = 2 * input[g.x]; }
}
`;

const ADD = /* wgsl */ `
struct C { n: u32 }
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(1) @binding(0) var<uniform> c: C;
@compute @workgroup_size(64)
fn add(@builtin(global_invocation_id) g: vec3<u32>) {
  if (g.x < c.n && g.x < min(arrayLength(&a), min(arrayLength(&b), arrayLength(&out)))) {
    out[g.x] = a[g.x] + b[g.x];
  }
}
`;

export type KernelName = 'abs' | 'scaleAndOffset' | 'workgroupIds' | 'negateDouble' | 'add';

const CODE: Readonly<Record<KernelName, string>> = {
  abs: ABS,
  scaleAndOffset: SCALE_AND_OFFSET,
  workgroupIds: WORKGROUP_IDS,
  negateDouble: NEGATE_DOUBLE,
  add: ADD,
};

/** The WGSL source of CTS kernel `kernel` with the suite's `exports`. */
export function wgslKernel(kernel: KernelName, exports: readonly ExportDescriptor[]): ExecutableSource {
  return { format: 'wgsl', code: CODE[kernel], exports, label: `cts ${kernel}` };
}
