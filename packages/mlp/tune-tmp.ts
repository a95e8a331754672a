import { compileGemmWasm } from './scripts/mlp-wasm';
import { instantiateGemm } from './src/cpu/gemm-instance';
import { scratchBytes, type GemmWatOptions } from './src/cpu/wat';
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const base = { mr: 4, nr: 8, unroll: 1, mc: 128, nc: 256, kc: 1024, fma: true };
const variants: GemmWatOptions[] = JSON.parse(process.argv[2] ?? '[{}]').map((v: object) => ({ ...base, ...v }));
// shapes: [m,n,k,transA,transB]
const shapes: [number, number, number, boolean, boolean][] = [[256,512,784,false,false],[256,512,512,false,true],[784,512,256,true,false]];
const memory = new WebAssembly.Memory({ initial: 1024, maximum: 1024, shared: true });
const f = new Float32Array(memory.buffer);
for (let i = 0; i < 16 << 20; i++) f[i] = ((i * 7) % 13) / 13 - 0.5;
for (const o of variants) {
  const { bytes } = await compileGemmWasm(o);
  const g = instantiateGemm(await WebAssembly.compile(bytes), memory);
  const out: string[] = [];
  for (const [m, n, k, ta, tb] of shapes) {
    const A = 1 << 20, B = 8 << 20, C = 16 << 20, S = 32 << 20;
    const run = () => g.gemm(m, n, k, A, ta ? 1 : k, ta ? m : 1, B, tb ? 1 : n, tb ? k : 1, C, n, 1, 0, 0, 0, 0, n, S);
    const ts: number[] = [];
    for (let s = 0; s < 12; s++) { const t = cpu(); run(); run(); if (s > 1) ts.push((cpu() - t) / 2); }
    ts.sort((a, b) => a - b);
    out.push((2 * m * n * k / ts[ts.length >> 1]! / 1e6).toFixed(1));
  }
  console.log(JSON.stringify(o), out.join(' '));
}
