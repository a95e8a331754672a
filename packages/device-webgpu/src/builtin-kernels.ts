/**
 * The device's built-in WGSL kernels, for what WebGPU's copy commands cannot do:
 *
 * - `fill`: fills bytes [start, end) of its binding with a 32-bit pattern (the 1- or 2-byte pattern
 *   replicated), for non-zero patterns and ranges that are not 4-byte aligned (`clearBuffer` only
 *   writes zeros at 4-byte granularity).
 * - `copy`: copies `length` bytes from byte `src_start` of binding 0 to byte `dst_start` of binding 1,
 *   for offsets or lengths that are not multiples of 4 (`copyBufferToBuffer` needs 4-byte alignment).
 *
 * - `validate_indirect`: checks indirect dispatch counts against the device limit (indirect-validator.ts).
 *
 * One invocation owns one destination word, so no two invocations write the same word: interior words
 * are written whole (a funnel shift of two source words when the offsets differ mod 4), the first and
 * last words are merged byte by byte with what the destination holds. Both run over a 2D grid
 * (`row_words` words per row) so any size fits WebGPU's 65535 workgroups per dimension. Parameters come
 * from the uniform ring (group 1), like dispatch constants.
 */
import type { BindingLayout, BindingLayouts } from './binding-layouts';

/** Invocations per workgroup of the built-in kernels. */
export const BUILTIN_WORKGROUP_SIZE = 64;
/** Bytes of a built-in kernel's parameters (six u32). */
export const BUILTIN_PARAMS_BYTES = 24;

const FILL_WGSL = /* wgsl */ `
struct Params { first_word: u32, word_count: u32, start: u32, end: u32, pattern: u32, row_words: u32 }
@group(0) @binding(0) var<storage, read_write> dst: array<u32>;
@group(1) @binding(0) var<uniform> p: Params;

@compute @workgroup_size(${BUILTIN_WORKGROUP_SIZE})
fn fill(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x + gid.y * p.row_words;
  if (i >= p.word_count) { return; }
  let w = p.first_word + i;
  let at = w * 4u;
  if (at >= p.start && at + 4u <= p.end) {
    dst[w] = p.pattern;
    return;
  }
  var mask = 0u;
  for (var b = 0u; b < 4u; b++) {
    let byte = at + b;
    if (byte >= p.start && byte < p.end) { mask |= 0xffu << (b * 8u); }
  }
  dst[w] = (dst[w] & ~mask) | (p.pattern & mask);
}
`;

const COPY_WGSL = /* wgsl */ `
struct Params { src_start: u32, dst_start: u32, length: u32, first_word: u32, word_count: u32, row_words: u32 }
@group(0) @binding(0) var<storage, read_write> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(1) @binding(0) var<uniform> p: Params;

fn src_byte(b: u32) -> u32 {
  return (src[b >> 2u] >> ((b & 3u) * 8u)) & 0xffu;
}

@compute @workgroup_size(${BUILTIN_WORKGROUP_SIZE})
fn copy(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x + gid.y * p.row_words;
  if (i >= p.word_count) { return; }
  let w = p.first_word + i;
  let at = w * 4u;
  let end = p.dst_start + p.length;
  if (at >= p.dst_start && at + 4u <= end) {
    let s = p.src_start + (at - p.dst_start);
    let k = s >> 2u;
    let shift = (s & 3u) * 8u;
    if (shift == 0u) {
      dst[w] = src[k];
    } else {
      dst[w] = (src[k] >> shift) | (src[k + 1u] << (32u - shift));
    }
    return;
  }
  var value = 0u;
  var mask = 0u;
  for (var b = 0u; b < 4u; b++) {
    let byte = at + b;
    if (byte >= p.dst_start && byte < end) {
      value |= src_byte(p.src_start + (byte - p.dst_start)) << (b * 8u);
      mask |= 0xffu << (b * 8u);
    }
  }
  dst[w] = (dst[w] & ~mask) | value;
}
`;

const VALIDATE_INDIRECT_WGSL = /* wgsl */ `
struct Params { src_word: u32, max_count: u32, pad0: u32, pad1: u32 }
@group(0) @binding(0) var<storage, read_write> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(1) @binding(0) var<uniform> p: Params;

@compute @workgroup_size(1)
fn validate_indirect() {
  let x = src[p.src_word];
  let y = src[p.src_word + 1u];
  let z = src[p.src_word + 2u];
  if (x > p.max_count || y > p.max_count || z > p.max_count) {
    dst[0] = 0u;
    dst[1] = 0u;
    dst[2] = 0u;
    if (dst[4] == 0u) {
      dst[4] = 1u;
      dst[5] = x;
      dst[6] = y;
      dst[7] = z;
    }
  } else {
    dst[0] = x;
    dst[1] = y;
    dst[2] = z;
  }
}
`;

export interface BuiltinKernels {
  readonly fill: GPUComputePipeline;
  readonly fillBindings: BindingLayout;
  readonly copy: GPUComputePipeline;
  readonly copyBindings: BindingLayout;
  /** Checks indirect dispatch counts (indirect-validator.ts); uses the copy layout ('ss'). */
  readonly validateIndirect: GPUComputePipeline;
}

/** One built-in kernel's pipeline (entry point `entry`, its own shader module, constants in group 1). */
function pipeline(
  device: GPUDevice,
  layouts: BindingLayouts,
  bindings: BindingLayout,
  code: string,
  entry: string,
): Promise<GPUComputePipeline> {
  const label = `keel ${entry.replace('_', ' ')}`;
  return device.createComputePipelineAsync({
    label,
    layout: layouts.pipelineLayout(bindings, true),
    compute: { module: device.createShaderModule({ code, label }), entryPoint: entry },
  });
}

/** Compiles the built-in kernels on `device` (once per Keel device, at creation). */
export async function createBuiltinKernels(
  device: GPUDevice,
  layouts: BindingLayouts,
): Promise<BuiltinKernels> {
  const fillBindings = layouts.bindings('s');
  const copyBindings = layouts.bindings('ss');
  const [fill, copy, validateIndirect] = await Promise.all([
    pipeline(device, layouts, fillBindings, FILL_WGSL, 'fill'),
    pipeline(device, layouts, copyBindings, COPY_WGSL, 'copy'),
    pipeline(device, layouts, copyBindings, VALIDATE_INDIRECT_WGSL, 'validate_indirect'),
  ]);
  return { fill, fillBindings, copy, copyBindings, validateIndirect };
}
