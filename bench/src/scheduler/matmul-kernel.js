// A real f32 matrix multiply for the CPU device (kernel ABI of @keel/device-cpu: one call per
// workgroup with typed views of the bindings). Used by the 'scheduler' benchmark suite.

/**
 * matmul: C = A × B for square n×n row-major f32 matrices. Each workgroup computes
 * `workgroupSize[0]` consecutive rows of C (workgroupCount[0] = ceil(n / rows)); i-k-j loop order,
 * so the innermost loop walks rows of B and C contiguously.
 * bindings: 0 = A, 1 = B, 2 = C; constants: 0 = n.
 */
export function matmul(ctx) {
  const a = ctx.bindings[0].f32;
  const b = ctx.bindings[1].f32;
  const c = ctx.bindings[2].f32;
  const n = ctx.constants[0];
  const rows = ctx.workgroupSize[0];
  const first = ctx.workgroupId[0] * rows;
  const last = Math.min(n, first + rows);
  for (let i = first; i < last; i++) {
    const ci = i * n;
    c.fill(0, ci, ci + n);
    for (let k = 0; k < n; k++) {
      const aik = a[ci + k];
      const bk = k * n;
      for (let j = 0; j < n; j++) c[ci + j] += aik * b[bk + j];
    }
  }
}
