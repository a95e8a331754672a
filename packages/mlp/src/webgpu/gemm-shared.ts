/**
 * The workgroup-memory GEMM entry points of the WGSL module (tilings of kind 'shared', for GPUs).
 *
 * A workgroup computes a `bm × bn` tile of C = epilogue(alpha · op(A)·op(B) + beta · C). Per slab of
 * `bk` along K, every invocation copies its share of the `bm × bk` slab of op(A) and the `bk × bn` slab
 * of op(B) into workgroup memory (`gemmA` as [k][m], `gemmB` as [k][n], vec4 arrays, two buffers each:
 * slab s+1 is loaded from global memory into registers before slab s is multiplied, and stored into the
 * other buffer after it, so each slab costs one barrier and the loads' latency hides behind the
 * FMAs). The copy walks
 * the matrix's contiguous dimension across consecutive invocations (K for a plain A, M for a transposed
 * one; N for a plain B, K for a transposed one), so global loads coalesce for every transpose; indices
 * are clamped into the matrices and values outside them are stored as 0, so sizes that are not
 * multiples of the tile (10 outputs, K = 784 or 10) need no other case. After a barrier, invocation
 * (tx, ty) accumulates rows `ty·tm ..` and columns `tx·tn ..` of the tile in `tm·tn` registers, reading
 * the slabs as vec4 (one load per 4 rows or columns when tm/tn ≥ 4). Only the stores check bounds,
 * through the entry's fused epilogue (alpha, beta, bias, ReLU, ReLU-gradient mask).
 *
 * Split-K (`ks` > 1): the workgroup is `ks` groups of `(bm/tm)·(bn/tn)` invocations; a step stages
 * `ks·bk` of K (copied by all invocations) and group g multiplies rows g·bk .. of the slabs; after the
 * K loop groups 1.. write their accumulators into the slabs (whole `bm × bn` blocks in the op(A) slabs,
 * then in the op(B) slabs: `splitKBlocks`), group 0 adds them and stores
 * through the epilogue (two barriers, no atomics, no scratch buffer). A per-shape tiling branches on
 * the uniform N between its narrow and wide tile loops (same workgroup size; the workgroup memory is
 * declared for the larger of the two).
 *
 * Tiles are walked grid-stride over the flattened dispatch grid, so any workgroup count is correct;
 * every barrier sits in loops and branches whose conditions are uniform (workgroup ids, counts,
 * constants).
 */
import {
  type GpuGemmTiling,
  gemmTilingName,
  gemmWorkgroupSize,
  isPerKernelTiling,
  isPerShapeTiling,
  type PerKernelGemmTiling,
  type PerShapeGemmTiling,
  type SharedGemmTiling,
  splitKBlocks,
} from './gemm-tiling';

const range = (n: number, from = 0): number[] =>
  Array.from({ length: Math.max(0, n - from) }, (_, i) => from + i);
const ind = (n: number): string => `\n${' '.repeat(n)}`;

/**
 * Reads of one k row of a slab for `count` consecutive elements starting at `start` (WGSL u32
 * expression) of the row `row` (a constant k): scalar WGSL expressions, one per element.
 */
function slabReads(
  slab: 'gemmA' | 'gemmB',
  width: number,
  count: number,
  start: string,
  kk: number,
  prefix: string,
): { lets: string[]; values: string[] } {
  const base = kk * width;
  if (count % 4 === 0) {
    const lets = range(count / 4).map(
      (j) => `let ${prefix}${j} = ${slab}[o${slab} + ${base / 4}u + ${start} / 4u + ${j}u];`,
    );
    const values = range(count).map((i) => `${prefix}${Math.floor(i / 4)}[${i % 4}]`);
    return { lets, values };
  }
  const lets = range(count).map((i) => {
    const e = `${base}u + ${start} + ${i}u`;
    return `let ${prefix}${i} = ${slab}[o${slab} + (${e}) / 4u][(${e}) % 4u];`;
  });
  return { lets, values: range(count).map((i) => `${prefix}${i}`) };
}

/**
 * The copy of one slab into workgroup memory, `elements` values over `threads` invocations, in three
 * parts: `setup` (once per dispatch: each copy's element, fixed by the invocation index), `load(k0)`
 * (global memory into registers `v<name><e>`, clamped, 0 outside the matrix) and `store(dst)` (the
 * registers into the slab at vec4 offset `dst`).
 */
interface SlabCopy {
  readonly setup: string[];
  readonly load: (k0: string) => string[];
  readonly store: (dst: string) => string[];
}

function slabCopy(
  name: 'A' | 'B',
  elements: number,
  threads: number,
  index: (i: string) => { outer: string; kk: string; dst: string },
  value: (outer: string, kk: string) => string,
): SlabCopy {
  const copies = range(Math.ceil(elements / threads));
  const guarded = elements % threads !== 0;
  const slab = `gemm${name}`;
  return {
    setup: copies.flatMap((e) => {
      const i = `i${name}${e}`;
      const x = index(i);
      return [
        `let ${i} = li + ${e * threads}u;`,
        `let o${name}${e} = ${x.outer};`,
        `let k${name}${e} = ${x.kk};`,
        `let d${name}${e} = ${x.dst};`,
        `var v${name}${e} = 0.0;`,
      ];
    }),
    load: (k0) => copies.map((e) => `v${name}${e} = ${value(`o${name}${e}`, `${k0} + k${name}${e}`)};`),
    store: (dst) =>
      copies.map(
        (e) =>
          `${guarded ? `if (i${name}${e} < ${elements}u) ` : ''}{ ${slab}[${dst} + d${name}${e} / 4u][d${name}${e} % 4u] = v${name}${e}; }`,
      ),
  };
}

/**
 * The tile loop of workgroup-memory tiling `t` (a WGSL block; see the file comment), for an entry
 * whose store function is `store_<name>`. Expects the prelude of `sharedMatmulEntry` in scope.
 */
function sharedTileLoop(t: SharedGemmTiling, name: string, onesRow: boolean): string {
  const ks = t.ks ?? 1;
  const bkT = t.bk * ks; // K staged per step, over all groups
  const tx = t.bn / t.tn;
  const base = tx * (t.bm / t.tm); // invocations per K group
  const threads = base * ks;
  const accs = range(t.tm).flatMap((i) => range(t.tn).map((j) => `c${i}_${j}`));
  const copyA = slabCopy(
    'A',
    t.bm * bkT,
    threads,
    (i) => ({
      outer: `select(${i} % ${t.bm}u, ${i} / ${bkT}u, aKFast)`,
      kk: `select(${i} / ${t.bm}u, ${i} % ${bkT}u, aKFast)`,
      dst: `kA${i.slice(2)} * ${t.bm}u + oA${i.slice(2)}`,
    }),
    (r, k) =>
      `select(${onesRow ? `select(0.0, 1.0, m0 + ${r} == p.m && ${k} < p.k)` : '0.0'}, in0[min(m0 + ${r}, mLast) * sAr + min(${k}, kLast) * sAk], m0 + ${r} < p.m && ${k} < p.k)`,
  );
  const copyB = slabCopy(
    'B',
    t.bn * bkT,
    threads,
    (i) => ({
      outer: `select(${i} / ${bkT}u, ${i} % ${t.bn}u, bNFast)`,
      kk: `select(${i} % ${bkT}u, ${i} / ${t.bn}u, bNFast)`,
      dst: `kB${i.slice(2)} * ${t.bn}u + oB${i.slice(2)}`,
    }),
    (c, k) =>
      `select(0.0, in1[min(${k}, kLast) * sBk + min(n0 + ${c}, nLast) * sBc], n0 + ${c} < p.n && ${k} < p.k)`,
  );
  const slabA = (bkT * t.bm) / 4;
  const slabB = (bkT * t.bn) / 4;
  const inner = range(t.bk).flatMap((kk) => {
    const a = slabReads('gemmA', t.bm, t.tm, 'rowA', kk, `a${kk}_`);
    const b = slabReads('gemmB', t.bn, t.tn, 'colB', kk, `b${kk}_`);
    return [
      ...a.lets,
      ...b.lets,
      ...range(t.tm).flatMap((i) =>
        range(t.tn).map((j) => `c${i}_${j} = fma(${a.values[i]}, ${b.values[j]}, c${i}_${j});`),
      ),
    ];
  });
  const stores = range(t.tm).flatMap((i) =>
    range(t.tn).map((j) => `store_${name}(p, m0 + rowA + ${i}u, n0 + colB + ${j}u, c${i}_${j});`),
  );
  // Split-K: groups 1.. park their partial sums in the slabs (free after the K loop's last barrier):
  // blocks of bm·bn values, whole blocks in the op(A) slabs first, then in the op(B) slabs; group 0 adds
  // them and stores; the second barrier keeps the next tile's slabs off them.
  const { inA } = splitKBlocks(t);
  const partial = (slab: 'gemmA' | 'gemmB', h: string, i: number, j: number): string => {
    const e = `${h} * ${t.bm * t.bn}u + (rowA + ${i}u) * ${t.bn}u + colB + ${j}u`;
    return `${slab}[(${e}) / 4u][(${e}) % 4u]`;
  };
  // With tn a multiple of 4 every 4 accumulators of a row are one aligned vec4 of the block.
  const quad = (slab: 'gemmA' | 'gemmB', h: string, i: number, q: number): string =>
    `${slab}[${h} * ${(t.bm * t.bn) / 4}u + (rowA + ${i}u) * ${t.bn / 4}u + colB / 4u + ${q}u]`;
  const vec4 = t.tn % 4 === 0;
  const park = (slab: 'gemmA' | 'gemmB', h: string): string[] =>
    range(t.tm).flatMap((i) =>
      vec4
        ? range(t.tn / 4).map(
            (q) =>
              `  ${quad(slab, h, i, q)} = vec4<f32>(${range(4, 0)
                .map((j) => `c${i}_${4 * q + j}`)
                .join(', ')});`,
          )
        : range(t.tn).map((j) => `  ${partial(slab, h, i, j)} = c${i}_${j};`),
    );
  const gather = (slab: 'gemmA' | 'gemmB', h: string): string[] =>
    range(t.tm).flatMap((i) =>
      vec4
        ? range(t.tn / 4).flatMap((q) => [
            `  { let v = ${quad(slab, h, i, q)};`,
            ...range(4).map((j) => `    c${i}_${4 * q + j} += v[${j}];`),
            '  }',
          ])
        : range(t.tn).map((j) => `  c${i}_${j} += ${partial(slab, h, i, j)};`),
    );
  // Block h (group h + 1's partial sums): in gemmA while h < inA, else block h - inA of gemmB.
  const place = (h: number): ['gemmA' | 'gemmB', string] =>
    h < inA ? ['gemmA', `${h}u`] : ['gemmB', `${h - inA}u`];
  const epilogue =
    ks === 1
      ? stores
      : [
          ks - 1 <= inA ? `if (g > 0u) {` : `if (g > 0u && g - 1u < ${inA}u) {`,
          ...park('gemmA', '(g - 1u)'),
          ...(ks - 1 <= inA ? [] : [`} else if (g > 0u) {`, ...park('gemmB', `(g - ${inA + 1}u)`)]),
          `}`,
          `workgroupBarrier();`,
          `if (g == 0u) {`,
          ...range(ks, 1).flatMap((h) => gather(...place(h - 1))),
          ...stores.map((line) => `  ${line}`),
          `}`,
          `workgroupBarrier();`,
        ];
  return `{
    // Tiling ${gemmTilingName(t)}: ${threads} invocations${ks > 1 ? `, ${ks} groups splitting K` : ''}.
    let g = li / ${base}u; // K group
    let lg = li % ${base}u;
    let rowA = (lg / ${tx}u) * ${t.tm}u;
    let colB = (lg % ${tx}u) * ${t.tn}u;
    let tilesM = (p.m + ${onesRow ? t.bm : t.bm - 1}u) / ${t.bm}u;${onesRow ? ' // rows of C and the ones row' : ''}
    let tilesN = (p.n + ${t.bn - 1}u) / ${t.bn}u;
    // Each invocation's elements of the slab copies (fixed for the whole dispatch).
    ${[...copyA.setup, ...copyB.setup].join(ind(4))}
    ${accs.map((c) => `var ${c} = 0.0;`).join(' ')}
    for (var tile = wid.x + nwg.x * (wid.y + nwg.y * wid.z); tile < tilesM * tilesN; tile += nwg.x * nwg.y * nwg.z) {
      let m0 = (tile % tilesM) * ${t.bm}u;
      let n0 = (tile / tilesM) * ${t.bn}u;
      ${accs.map((c) => `${c} = 0.0;`).join(' ')}
      if (p.k > 0u) {
        // Double-buffered slabs: slab s + 1 is loaded into registers before slab s is multiplied and
        // stored into the other buffer after it, so one barrier per slab suffices and the global loads'
        // latency hides behind the FMAs.
        ${[...copyA.load('0u'), ...copyB.load('0u')].join(ind(8))}
        ${[...copyA.store('0u'), ...copyB.store('0u')].join(ind(8))}
        workgroupBarrier();
        var buf = 0u;
        for (var k0 = 0u; k0 < p.k; k0 += ${bkT}u) {
          let next = k0 + ${bkT}u < p.k;
          if (next) {
            ${[...copyA.load(`k0 + ${bkT}u`), ...copyB.load(`k0 + ${bkT}u`)].join(ind(12))}
          }
          let ogemmA = buf * ${slabA}u + g * ${(t.bk * t.bm) / 4}u;
          let ogemmB = buf * ${slabB}u + g * ${(t.bk * t.bn) / 4}u;
          ${inner.join(ind(10))}
          if (next) {
            ${[...copyA.store(`(1u - buf) * ${slabA}u`), ...copyB.store(`(1u - buf) * ${slabB}u`)].join(ind(12))}
          }
          workgroupBarrier();
          buf = 1u - buf;
        }
      }
      ${epilogue.join(ind(6))}
    }
  }`;
}

/** The workgroup-memory tilings of `t` (one, a per-shape tiling's two, a per-kernel tiling's all). */
const parts = (t: GpuGemmTiling | PerKernelGemmTiling): SharedGemmTiling[] => {
  if (isPerKernelTiling(t)) return [t.forward, t.weightGrad, t.inputGrad].flatMap(parts);
  return isPerShapeTiling(t) ? [t.wide, t.narrow] : [t];
};

/**
 * The workgroup-memory declarations the shared entry points use (once per module, sized for the
 * largest tiling: each entry point that uses them counts the declared size against its limit).
 */
export function sharedGemmDeclarations(t: GpuGemmTiling | PerKernelGemmTiling): string {
  const a = Math.max(...parts(t).map((x) => (2 * x.bk * (x.ks ?? 1) * x.bm) / 4));
  const b = Math.max(...parts(t).map((x) => (2 * x.bk * (x.ks ?? 1) * x.bn) / 4));
  return `var<workgroup> gemmA: array<vec4<f32>, ${a}>; // two op(A) slabs, [k][m] each
var<workgroup> gemmB: array<vec4<f32>, ${b}>; // two op(B) slabs, [k][n] each
`;
}

/**
 * A matmul-family entry point with workgroup-memory tiling `t` (see the file comment; a per-shape
 * tiling branches on the uniform N to its narrow or wide tile loop). `store` is the name of the
 * entry's store function (`store_<name>(p, r, c, acc)`, epilogue and bounds check). `onesRow`
 * (`matmul_bias_grad`): op(A) gains a row M of ones (zero past K), so row M of the tiles holds the
 * column sums of op(B), which the store function sends to D.
 */
export function sharedMatmulEntry(
  t: SharedGemmTiling | PerShapeGemmTiling,
  name: string,
  onesRow = false,
): string {
  const body = isPerShapeTiling(t)
    ? `if (p.n <= ${t.narrow.bn}u) ${sharedTileLoop(t.narrow, name, onesRow)} else ${sharedTileLoop(t.wide, name, onesRow)}`
    : sharedTileLoop(t, name, onesRow);
  return `@compute @workgroup_size(${gemmWorkgroupSize(t)})
fn ${name}(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
  let p = mmParams();
  let transA = (p.flags & FLAG_TRANS_A) != 0u;
  let transB = (p.flags & FLAG_TRANS_B) != 0u;
  // op(A)[r, k] = in0[r * sAr + k * sAk]; op(B)[k, c] = in1[k * sBk + c * sBc].
  let sAr = select(p.k, 1u, transA);
  let sAk = select(1u, p.m, transA);
  let sBk = select(p.n, 1u, transB);
  let sBc = select(1u, p.k, transB);
  // The slab copies walk the contiguous dimension across invocations.
  let aKFast = !transA;
  let bNFast = !transB;
  let mLast = max(p.m, 1u) - 1u;
  let nLast = max(p.n, 1u) - 1u;
  let kLast = max(p.k, 1u) - 1u;
  ${body}
}
`;
}
