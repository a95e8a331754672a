/**
 * Generator of the WebAssembly text (WAT) of the MLP's CPU matmul: a BLIS-style GEMM with a register-
 * blocked f32x4 microkernel, SIMD packing of both operands (with in-register 4×4 transposes for
 * transposed layouts) and a fused epilogue (alpha, beta, bias, ReLU, ReLU-gradient mask).
 *
 * The module imports its memory (`env.memory`, shared, up to 4 GiB) and exports one function:
 *
 * ```
 * gemm(m, n, k, a, aRs, aCs, b, bRs, bCs, c, ldc, alpha: f32, beta: f32, flags, bias, mask, ldm, scratch)
 * ```
 *
 * which computes, for i < m, j < n (pointers are byte addresses, strides are in elements):
 *
 * ```
 * acc      = Σ_p A[i, p] · B[p, j]      A[i, p] at a + 4·(i·aRs + p·aCs), B[p, j] at b + 4·(p·bRs + j·bCs)
 * v        = alpha · acc + beta · C[i, j]        (C is not read when beta is 0)
 * v       += bias[j]                    if flags & FLAG_BIAS   (bias[j] at bias + 4·j)
 * v        = max(v, 0)                  if flags & FLAG_RELU
 * v        = mask[i, j] > 0 ? v : 0     if flags & FLAG_MASK   (mask[i, j] at mask + 4·(i·ldm + j))
 * C[i, j]  = v                          C[i, j] at c + 4·(i·ldc + j)
 * ```
 *
 * Any strides work (so `op(A)` and `op(B)` may be transposed views); the fast packing paths are unit
 * stride along either dimension. `scratch` must point at `scratchBytes(options)` writable bytes that
 * nothing else uses during the call (one region per concurrently running thread). C must not overlap A,
 * B, bias, mask or scratch. Loop order (Goto/BLIS): N in blocks of `nc`, K in near-equal chunks of at
 * most `kc`, M in blocks of `mc`, then `nr`-wide panels of B and `mr`-tall panels of A.
 *
 * Pure string generation, no Node APIs: the build compiles it with wabt, tests compile it the same way.
 */

/** Tile and block sizes of the generated GEMM. */
export interface GemmWatOptions {
  /** Rows of the microkernel's register tile (a multiple of 4). */
  readonly mr: number;
  /** Columns of the microkernel's register tile (a multiple of 4). */
  readonly nr: number;
  /** k-loop unroll factor of the microkernel. */
  readonly unroll: number;
  /** Rows of A packed at a time (a multiple of mr). */
  readonly mc: number;
  /** Columns of B packed at a time (a multiple of nr). */
  readonly nc: number;
  /** Largest K chunk packed at a time (a multiple of 4). */
  readonly kc: number;
  /**
   * Accumulate with `f32x4.relaxed_madd` (relaxed SIMD: a fused multiply-add where the CPU has one)
   * instead of `f32x4.mul` + `f32x4.add`. Default false (plain SIMD). A module built with it only
   * compiles on engines with relaxed SIMD (Chromium ≥ 114, Node ≥ 22; Node 20 behind
   * `--experimental-wasm-relaxed-simd`): feature-detect with `WebAssembly.validate`.
   */
  readonly fma?: boolean;
}

/** The sizes the package build uses (4×8 measured fastest under V8 x64: 12 of 15 xmm registers). */
export const DEFAULT_GEMM_OPTIONS: GemmWatOptions = Object.freeze({
  mr: 4,
  nr: 8,
  unroll: 1,
  mc: 128,
  nc: 256,
  kc: 1024,
});

/** The same sizes, accumulating with relaxed SIMD's fused multiply-add. */
export const RELAXED_GEMM_OPTIONS: GemmWatOptions = Object.freeze({ ...DEFAULT_GEMM_OPTIONS, fma: true });

export const FLAG_BIAS = 1;
export const FLAG_RELU = 2;
export const FLAG_MASK = 4;

/** Bytes of scratch one `gemm` call needs. */
export function scratchBytes(o: GemmWatOptions = DEFAULT_GEMM_OPTIONS): number {
  return 4 * (o.kc * (o.mc + o.nc) + o.mr * o.nr);
}

function checkOptions(o: GemmWatOptions): void {
  const ok =
    o.mr % 4 === 0 &&
    o.nr % 4 === 0 &&
    o.mr > 0 &&
    o.nr > 0 &&
    o.unroll >= 1 &&
    o.mc % o.mr === 0 &&
    o.nc % o.nr === 0 &&
    o.kc % 4 === 0 &&
    o.kc > 0;
  if (!ok) throw new RangeError(`gemm wat: invalid options ${JSON.stringify(o)}`);
}

const i32 = (v: number): string => `(i32.const ${v})`;
const get = (name: string): string => `(local.get $${name})`;
const set = (name: string, value: string): string => `(local.set $${name} ${value})`;
const add = (x: string, y: string): string => `(i32.add ${x} ${y})`;
const mul = (x: string, y: string): string => `(i32.mul ${x} ${y})`;
const shl2 = (x: string): string => `(i32.shl ${x} ${i32(2)})`;

/** Byte-lane indices for i8x16.shuffle selecting 32-bit lanes (0–3 of x, 4–7 of y). */
function lanes(...l: number[]): string {
  return l.flatMap((lane) => [4 * lane, 4 * lane + 1, 4 * lane + 2, 4 * lane + 3]).join(' ');
}

/**
 * `$pack<xr>(src, sK, sX, kc, xc, dst)`: packs the kc × xc block whose element (p, x) lies at
 * src + 4·(p·sK + x·sX) into panels of xr columns, dst[x / xr][p][x % xr], zero-padding the last panel.
 */
function packFunction(xr: number): string {
  const nv = xr / 4;
  const body: string[] = [];
  const copyRow: string[] = [];
  for (let v = 0; v < nv; v++) {
    copyRow.push(`(v128.store offset=${16 * v} ${get('d')} (v128.load offset=${16 * v} ${get('s')}))`);
  }
  // Transposing path: 4 x-rows (contiguous along p) × 4 p → 4 vectors along x.
  const transpose: string[] = [];
  for (let g = 0; g < nv; g++) {
    for (let r = 0; r < 4; r++) {
      transpose.push(set(`v${r}`, `(v128.load ${add(get('s'), mul(get('sXb'), i32(4 * g + r)))})`));
    }
    transpose.push(set('t0', `(i8x16.shuffle ${lanes(0, 4, 1, 5)} ${get('v0')} ${get('v1')})`));
    transpose.push(set('t1', `(i8x16.shuffle ${lanes(0, 4, 1, 5)} ${get('v2')} ${get('v3')})`));
    transpose.push(set('t2', `(i8x16.shuffle ${lanes(2, 6, 3, 7)} ${get('v0')} ${get('v1')})`));
    transpose.push(set('t3', `(i8x16.shuffle ${lanes(2, 6, 3, 7)} ${get('v2')} ${get('v3')})`));
    const rows = [
      `(i8x16.shuffle ${lanes(0, 1, 4, 5)} ${get('t0')} ${get('t1')})`,
      `(i8x16.shuffle ${lanes(2, 3, 6, 7)} ${get('t0')} ${get('t1')})`,
      `(i8x16.shuffle ${lanes(0, 1, 4, 5)} ${get('t2')} ${get('t3')})`,
      `(i8x16.shuffle ${lanes(2, 3, 6, 7)} ${get('t2')} ${get('t3')})`,
    ];
    for (let q = 0; q < 4; q++) {
      transpose.push(`(v128.store offset=${4 * (q * xr + 4 * g)} ${get('d')} ${rows[q]})`);
    }
  }
  body.push(`(func $pack${xr} (param $src i32) (param $sK i32) (param $sX i32) (param $kc i32) (param $xc i32) (param $dst i32)
  (local $x0 i32) (local $xw i32) (local $p i32) (local $x i32) (local $s i32) (local $d i32) (local $sKb i32) (local $sXb i32)
  (local $v0 v128) (local $v1 v128) (local $v2 v128) (local $v3 v128)
  (local $t0 v128) (local $t1 v128) (local $t2 v128) (local $t3 v128)
  ${set('sKb', shl2(get('sK')))}
  ${set('sXb', shl2(get('sX')))}
  ${set('x0', i32(0))}
  (block $panels_done (loop $panels
    (br_if $panels_done (i32.ge_s ${get('x0')} ${get('xc')}))
    ${set('xw', `(select (i32.sub ${get('xc')} ${get('x0')}) ${i32(xr)} (i32.lt_s (i32.sub ${get('xc')} ${get('x0')}) ${i32(xr)}))`)}
    ${set('p', i32(0))}
    (if (i32.and (i32.eq ${get('xw')} ${i32(xr)}) (i32.eq ${get('sX')} ${i32(1)}))
      (then
        ${set('s', get('src'))}
        ${set('d', get('dst'))}
        (block $cd (loop $cl
          (br_if $cd (i32.ge_s ${get('p')} ${get('kc')}))
          ${copyRow.join('\n          ')}
          ${set('s', add(get('s'), get('sKb')))}
          ${set('d', add(get('d'), i32(4 * xr)))}
          ${set('p', add(get('p'), i32(1)))}
          (br $cl))))
      (else
        (if (i32.and (i32.eq ${get('xw')} ${i32(xr)}) (i32.eq ${get('sK')} ${i32(1)}))
          (then
            ${set('s', get('src'))}
            ${set('d', get('dst'))}
            (block $td (loop $tl
              (br_if $td (i32.gt_s ${add(get('p'), i32(4))} ${get('kc')}))
              ${transpose.join('\n              ')}
              ${set('s', add(get('s'), i32(16)))}
              ${set('d', add(get('d'), i32(16 * xr)))}
              ${set('p', add(get('p'), i32(4)))}
              (br $tl)))))
        ;; Scalar path (and the p-remainder of the transposing path): zero-pads x ≥ xw.
        (block $sd (loop $sl
          (br_if $sd (i32.ge_s ${get('p')} ${get('kc')}))
          ${set('x', i32(0))}
          (loop $sx
            (f32.store ${add(get('dst'), shl2(add(mul(get('p'), i32(xr)), get('x'))))}
              (if (result f32) (i32.lt_s ${get('x')} ${get('xw')})
                (then (f32.load ${add(get('src'), shl2(add(mul(get('p'), get('sK')), mul(get('x'), get('sX')))))}))
                (else (f32.const 0))))
            ${set('x', add(get('x'), i32(1)))}
            (br_if $sx (i32.lt_s ${get('x')} ${i32(xr)})))
          ${set('p', add(get('p'), i32(1)))}
          (br $sl)))))
    ${set('src', add(get('src'), mul(get('sXb'), i32(xr))))}
    ${set('dst', add(get('dst'), mul(get('kc'), i32(4 * xr))))}
    ${set('x0', add(get('x0'), i32(xr)))}
    (br $panels)))
)`);
  return body.join('\n');
}

/**
 * `$kernel(pa, pb, kc, c, ldcBytes, alpha, beta, flags, bias, mask, ldmBytes)`: the mr × nr register
 * tile over packed panels, with the full epilogue (see the module contract).
 */
function kernelFunction(o: GemmWatOptions): string {
  const { mr, nr, unroll } = o;
  const nv = nr / 4;
  const acc = (i: number, j: number): string => `c${i}_${j}`;
  const locals: string[] = [];
  for (let i = 0; i < mr; i++) for (let j = 0; j < nv; j++) locals.push(`(local $${acc(i, j)} v128)`);
  for (let j = 0; j < nv; j++) locals.push(`(local $b${j} v128)`);
  const step = (u: number): string[] => {
    const lines: string[] = [];
    for (let j = 0; j < nv; j++) {
      lines.push(set(`b${j}`, `(v128.load offset=${4 * (u * nr + 4 * j)} ${get('pb')})`));
    }
    for (let i = 0; i < mr; i++) {
      lines.push(set('a', `(v128.load32_splat offset=${4 * (u * mr + i)} ${get('pa')})`));
      for (let j = 0; j < nv; j++) {
        lines.push(
          set(
            acc(i, j),
            o.fma
              ? `(f32x4.relaxed_madd ${get('a')} ${get(`b${j}`)} ${get(acc(i, j))})`
              : `(f32x4.add ${get(acc(i, j))} (f32x4.mul ${get('a')} ${get(`b${j}`)}))`,
          ),
        );
      }
    }
    return lines;
  };
  const unrolled: string[] = [];
  for (let u = 0; u < unroll; u++) unrolled.push(...step(u));
  const forAll = (f: (i: number, j: number) => string): string => {
    const lines: string[] = [];
    for (let i = 0; i < mr; i++) for (let j = 0; j < nv; j++) lines.push(f(i, j));
    return lines.join('\n      ');
  };
  const rowAddr = (base: string, ld: string, i: number): string =>
    i === 0 ? get(base) : add(get(base), mul(get(ld), i32(i)));
  return `(func $kernel (param $pa i32) (param $pb i32) (param $kc i32) (param $c i32) (param $ldc i32)
  (param $alpha f32) (param $beta f32) (param $flags i32) (param $bias i32) (param $mask i32) (param $ldm i32)
  ${locals.join(' ')}
  (local $a v128) (local $end i32) (local $endU i32) (local $s v128) (local $zero v128)
  ${set('end', add(get('pa'), mul(get('kc'), i32(4 * mr))))}
  ${set('endU', add(get('pa'), mul(`(i32.sub ${get('kc')} (i32.rem_u ${get('kc')} ${i32(unroll)}))`, i32(4 * mr))))}
  (block $ud (loop $ul
    (br_if $ud (i32.ge_u ${get('pa')} ${get('endU')}))
    ${unrolled.join('\n    ')}
    ${set('pa', add(get('pa'), i32(4 * mr * unroll)))}
    ${set('pb', add(get('pb'), i32(4 * nr * unroll)))}
    (br $ul)))
  (block $rd (loop $rl
    (br_if $rd (i32.ge_u ${get('pa')} ${get('end')}))
    ${step(0).join('\n    ')}
    ${set('pa', add(get('pa'), i32(4 * mr)))}
    ${set('pb', add(get('pb'), i32(4 * nr)))}
    (br $rl)))
  (if (f32.ne ${get('alpha')} (f32.const 1))
    (then
      ${set('s', `(f32x4.splat ${get('alpha')})`)}
      ${forAll((i, j) => set(acc(i, j), `(f32x4.mul ${get(acc(i, j))} ${get('s')})`))}))
  (if (f32.ne ${get('beta')} (f32.const 0))
    (then
      ${set('s', `(f32x4.splat ${get('beta')})`)}
      ${forAll((i, j) =>
        set(
          acc(i, j),
          `(f32x4.add ${get(acc(i, j))} (f32x4.mul ${get('s')} (v128.load offset=${16 * j} ${rowAddr('c', 'ldc', i)})))`,
        ),
      )}))
  (if (i32.and ${get('flags')} ${i32(FLAG_BIAS)})
    (then
      ${Array.from({ length: nv }, (_, j) => set(`b${j}`, `(v128.load offset=${16 * j} ${get('bias')})`)).join('\n      ')}
      ${forAll((i, j) => set(acc(i, j), `(f32x4.add ${get(acc(i, j))} ${get(`b${j}`)})`))}))
  ${set('zero', '(v128.const i32x4 0 0 0 0)')}
  (if (i32.and ${get('flags')} ${i32(FLAG_RELU)})
    (then
      ${forAll((i, j) => set(acc(i, j), `(f32x4.pmax ${get('zero')} ${get(acc(i, j))})`))}))
  (if (i32.and ${get('flags')} ${i32(FLAG_MASK)})
    (then
      ${forAll((i, j) =>
        set(
          acc(i, j),
          `(v128.and ${get(acc(i, j))} (f32x4.gt (v128.load offset=${16 * j} ${rowAddr('mask', 'ldm', i)}) ${get('zero')}))`,
        ),
      )}))
  ${forAll((i, j) => `(v128.store offset=${16 * j} ${rowAddr('c', 'ldc', i)} ${get(acc(i, j))})`)}
)`;
}

/**
 * `$edge(tmp, mr, nr, c, ldc, alpha, beta, flags, bias, mask, ldm)`: the scalar epilogue of a partial
 * tile whose raw sums the kernel wrote to `tmp` (row stride nr of the options). Strides in elements.
 */
function edgeFunction(o: GemmWatOptions): string {
  return `(func $edge (param $tmp i32) (param $mr i32) (param $nr i32) (param $c i32) (param $ldc i32)
  (param $alpha f32) (param $beta f32) (param $flags i32) (param $bias i32) (param $mask i32) (param $ldm i32)
  (local $i i32) (local $j i32) (local $v f32) (local $ca i32)
  ${set('i', i32(0))}
  (loop $li
    ${set('j', i32(0))}
    (loop $lj
      ${set('ca', add(get('c'), shl2(add(mul(get('i'), get('ldc')), get('j')))))}
      ${set('v', `(f32.mul ${get('alpha')} (f32.load ${add(get('tmp'), shl2(add(mul(get('i'), i32(o.nr)), get('j'))))}))`)}
      (if (f32.ne ${get('beta')} (f32.const 0))
        (then ${set('v', `(f32.add ${get('v')} (f32.mul ${get('beta')} (f32.load ${get('ca')})))`)}))
      (if (i32.and ${get('flags')} ${i32(FLAG_BIAS)})
        (then ${set('v', `(f32.add ${get('v')} (f32.load ${add(get('bias'), shl2(get('j')))}))`)}))
      (if (i32.and ${get('flags')} ${i32(FLAG_RELU)})
        (then ${set('v', `(select ${get('v')} (f32.const 0) (f32.gt ${get('v')} (f32.const 0)))`)}))
      (if (i32.and ${get('flags')} ${i32(FLAG_MASK)})
        (then ${set('v', `(select ${get('v')} (f32.const 0) (f32.gt (f32.load ${add(get('mask'), shl2(add(mul(get('i'), get('ldm')), get('j'))))}) (f32.const 0)))`)}))
      (f32.store ${get('ca')} ${get('v')})
      ${set('j', add(get('j'), i32(1)))}
      (br_if $lj (i32.lt_s ${get('j')} ${get('nr')})))
    ${set('i', add(get('i'), i32(1)))}
    (br_if $li (i32.lt_s ${get('i')} ${get('mr')})))
)`;
}

function gemmFunction(o: GemmWatOptions): string {
  const { mr, nr, mc, nc, kc } = o;
  const pB = 4 * kc * mc; // offset of packed B in scratch
  const tmp = 4 * kc * (mc + nc); // offset of the edge tile in scratch
  const min = (x: string, y: string): string => `(select ${x} ${y} (i32.lt_s ${x} ${y}))`;
  return `(func (export "gemm") (param $m i32) (param $n i32) (param $k i32)
  (param $a i32) (param $aRs i32) (param $aCs i32) (param $b i32) (param $bRs i32) (param $bCs i32)
  (param $c i32) (param $ldc i32) (param $alpha f32) (param $beta f32) (param $flags i32)
  (param $bias i32) (param $mask i32) (param $ldm i32) (param $scratch i32)
  (local $jc i32) (local $ncw i32) (local $pc i32) (local $kcStep i32) (local $kcw i32) (local $chunks i32)
  (local $ic i32) (local $mcw i32) (local $jr i32) (local $nrw i32) (local $ir i32) (local $mrw i32)
  (local $betaEff f32) (local $flagsEff i32) (local $cp i32) (local $biasp i32) (local $maskp i32)
  (local $pa i32) (local $pb i32)
  (if (i32.or (i32.le_s ${get('m')} ${i32(0)}) (i32.le_s ${get('n')} ${i32(0)})) (then (return)))
  (if (i32.le_s ${get('k')} ${i32(0)})
    (then
      ;; Empty sum: only the epilogue runs.
      ${set('k', i32(0))}))
  ;; K chunks of near-equal size, each at most kc and a multiple of 4 (except the last).
  ${set('chunks', `(i32.div_u ${add(get('k'), i32(kc - 1))} ${i32(kc)})`)}
  (if (i32.eqz ${get('chunks')}) (then ${set('chunks', i32(1))}))
  ${set('kcStep', `(i32.and ${add(`(i32.div_u ${add(get('k'), `(i32.sub ${get('chunks')} ${i32(1)})`)} ${get('chunks')})`, i32(3))} ${i32(-4)})`)}
  ${set('jc', i32(0))}
  (loop $ljc
    ${set('ncw', min(`(i32.sub ${get('n')} ${get('jc')})`, i32(nc)))}
    ${set('pc', i32(0))}
    (loop $lpc
      ${set('kcw', min(`(i32.sub ${get('k')} ${get('pc')})`, get('kcStep')))}
      ${set('betaEff', `(select ${get('beta')} (f32.const 1) (i32.eqz ${get('pc')}))`)}
      ${set('flagsEff', `(select ${get('flags')} ${i32(0)} (i32.ge_s ${add(get('pc'), get('kcw'))} ${get('k')}))`)}
      (call $pack${nr} ${add(get('b'), shl2(add(mul(get('pc'), get('bRs')), mul(get('jc'), get('bCs')))))}
        ${get('bRs')} ${get('bCs')} ${get('kcw')} ${get('ncw')} ${add(get('scratch'), i32(pB))})
      ${set('ic', i32(0))}
      (loop $lic
        ${set('mcw', min(`(i32.sub ${get('m')} ${get('ic')})`, i32(mc)))}
        (call $pack${mr} ${add(get('a'), shl2(add(mul(get('ic'), get('aRs')), mul(get('pc'), get('aCs')))))}
          ${get('aCs')} ${get('aRs')} ${get('kcw')} ${get('mcw')} ${get('scratch')})
        ${set('jr', i32(0))}
        (loop $ljr
          ${set('nrw', min(`(i32.sub ${get('ncw')} ${get('jr')})`, i32(nr)))}
          ${set('pb', add(add(get('scratch'), i32(pB)), shl2(mul(get('jr'), get('kcw')))))}
          ${set('biasp', add(get('bias'), shl2(add(get('jc'), get('jr')))))}
          ${set('ir', i32(0))}
          (loop $lir
            ${set('mrw', min(`(i32.sub ${get('mcw')} ${get('ir')})`, i32(mr)))}
            ${set('pa', add(get('scratch'), shl2(mul(get('ir'), get('kcw')))))}
            ${set('cp', add(get('c'), shl2(add(mul(add(get('ic'), get('ir')), get('ldc')), add(get('jc'), get('jr'))))))}
            ${set('maskp', add(get('mask'), shl2(add(mul(add(get('ic'), get('ir')), get('ldm')), add(get('jc'), get('jr'))))))}
            (if (i32.and (i32.eq ${get('mrw')} ${i32(mr)}) (i32.eq ${get('nrw')} ${i32(nr)}))
              (then
                (call $kernel ${get('pa')} ${get('pb')} ${get('kcw')} ${get('cp')} ${shl2(get('ldc'))}
                  ${get('alpha')} ${get('betaEff')} ${get('flagsEff')} ${get('biasp')} ${get('maskp')} ${shl2(get('ldm'))}))
              (else
                (call $kernel ${get('pa')} ${get('pb')} ${get('kcw')} ${add(get('scratch'), i32(tmp))} ${i32(4 * nr)}
                  (f32.const 1) (f32.const 0) ${i32(0)} ${i32(0)} ${i32(0)} ${i32(0)})
                (call $edge ${add(get('scratch'), i32(tmp))} ${get('mrw')} ${get('nrw')} ${get('cp')} ${get('ldc')}
                  ${get('alpha')} ${get('betaEff')} ${get('flagsEff')} ${get('biasp')} ${get('maskp')} ${get('ldm')})))
            ${set('ir', add(get('ir'), i32(mr)))}
            (br_if $lir (i32.lt_s ${get('ir')} ${get('mcw')})))
          ${set('jr', add(get('jr'), i32(nr)))}
          (br_if $ljr (i32.lt_s ${get('jr')} ${get('ncw')})))
        ${set('ic', add(get('ic'), i32(mc)))}
        (br_if $lic (i32.lt_s ${get('ic')} ${get('m')})))
      ${set('pc', add(get('pc'), get('kcw')))}
      (br_if $lpc (i32.lt_s ${get('pc')} ${get('k')})))
    ${set('jc', add(get('jc'), i32(nc)))}
    (br_if $ljc (i32.lt_s ${get('jc')} ${get('n')})))
)`;
}

/** The WAT text of the GEMM module for these sizes. */
export function generateGemmWat(options: GemmWatOptions = DEFAULT_GEMM_OPTIONS): string {
  checkOptions(options);
  const packs = options.mr === options.nr ? [options.mr] : [options.mr, options.nr];
  return `;; Generated by packages/mlp/src/cpu/wat.ts (${JSON.stringify(options)}). Do not edit.
(module
(import "env" "memory" (memory 1 65536 shared))
${packs.map(packFunction).join('\n')}
${kernelFunction(options)}
${edgeFunction(options)}
${gemmFunction(options)}
)
`;
}
