// A CPU kernel module for examples/residency.mjs: adds the f32 constant 0 to every element of binding 0.
export function addScalar(ctx) {
  const data = ctx.bindings[0].f32;
  const value = ctx.constantsF32[0];
  const size = ctx.workgroupSize[0];
  const start = ctx.workgroupId[0] * size;
  const end = Math.min(data.length, start + size);
  for (let i = start; i < end; i++) data[i] += value;
}
