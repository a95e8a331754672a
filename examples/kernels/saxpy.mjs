// A CPU kernel module for the examples (cpu-kernel.mjs, command-buffer.mjs, hal-device.mjs): `y = a * x + y`
// over f32 arrays. The device calls `saxpy` once per workgroup; the kernel loops over its workgroup's elements.
// Bindings: 0 = x (read), 1 = y (read-write). Constants: 0 = a (f32 bits), 1 = n (u32).
export function saxpy(ctx) {
  const x = ctx.bindings[0].f32;
  const y = ctx.bindings[1].f32;
  const a = ctx.constantsF32[0];
  const n = ctx.constants[1];
  const size = ctx.workgroupSize[0];
  const start = ctx.workgroupId[0] * size;
  const end = Math.min(n, start + size);
  for (let i = start; i < end; i++) y[i] = a * x[i] + y[i];
}
