/**
 * Seeded random programs across two queues, checked against a sequential reference. A program is a
 * random DAG of fills, updates, writes, copies, dispatches (`add_const` through a reusable command
 * buffer and a binding table) and reads over three buffers; every operation signals its own semaphore
 * and waits on the operations it conflicts with (last writer, readers since) plus random extra
 * dependencies, on a random one of two queues. Everything is issued up front; the reference is a plain
 * byte model run in issue order, which every fence-respecting schedule must match. A failure names the
 * seed (rerun one with FAULT_SEED=<seed>).
 */
import { Fence, type Semaphore } from '@keel/fence';
import type { Buffer, CommandBuffer, Device } from '@keel/hal';
import { describe, expect, it } from 'vitest';
import { type Backend, backends, title } from './backends';
import {
  bounded,
  expectBytes,
  failOnUncapturedGpuErrors,
  outcome,
  Q0,
  Q1,
  readBytes,
  STORAGE,
} from './helpers';

const all = await backends();
failOnUncapturedGpuErrors();
const SEEDS = process.env.FAULT_SEED ? [Number(process.env.FAULT_SEED)] : [1, 2, 3];
const BUFFERS = 3;
const SIZE = 1024;
const OPS = 80;
const ADDS = [1, 3, 0x01010101];

/** mulberry32: a small seeded PRNG. */
function prng(seed: number): { int(n: number): number; chance(p: number): boolean } {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { int: (n) => Math.floor(next() * n), chance: (p) => next() < p };
}

interface Issued {
  readonly signal: Fence;
  readonly semaphore: Semaphore;
  readonly what: string;
}

interface PendingRead {
  readonly op: number;
  readonly out: Uint8Array;
  readonly expected: Uint8Array;
}

async function runProgram(backend: Backend, seed: number): Promise<void> {
  const rnd = prng(seed);
  const device: Device = await backend.create(2);
  try {
    const exe = await backend.addConst(device);
    const align = Math.max(16, device.info.limits.minStorageBufferOffsetAlignment);
    const adds: CommandBuffer[] = ADDS.map((value) => {
      const cb = device.createCommandBuffer({ mode: 'reusable', bindingCapacity: 1 });
      cb.begin();
      cb.dispatch(exe, 'add_const', {
        workload: [SIZE / 4],
        constants: [value, SIZE / 4],
        bindings: [{ slot: 0 }],
      });
      cb.end();
      return cb;
    });
    const buffers: Buffer[] = [];
    const model: Uint8Array[] = [];
    for (let i = 0; i < BUFFERS; i++) {
      buffers.push(device.createBuffer({ byteLength: SIZE, usage: STORAGE }));
      model.push(new Uint8Array(SIZE));
    }
    const issued: Issued[] = [];
    const lastWriter: (number | undefined)[] = new Array(BUFFERS).fill(undefined);
    const readers: number[][] = Array.from({ length: BUFFERS }, () => []);
    const reads: PendingRead[] = [];
    const log: string[] = [];

    const range = (granule = 1): [number, number] => {
      const offset = rnd.int(SIZE / granule) * granule;
      const length = (1 + rnd.int((SIZE - offset) / granule)) * granule;
      return [offset, length];
    };

    for (let op = 0; op < OPS; op++) {
      const kind = rnd.int(6);
      const queue = rnd.chance(0.5) ? Q0 : Q1;
      const deps = new Set<number>();
      const reading: number[] = [];
      const writing: number[] = [];
      const semaphore = device.createSemaphore(0);
      const signal = Fence.of({ semaphore, value: 1 });
      let issue: (wait: Fence) => void;
      let what: string;
      const b = rnd.int(BUFFERS);
      const buffer = buffers[b] as Buffer;
      const bytes = model[b] as Uint8Array;
      switch (kind) {
        case 0: {
          const patternLength = ([1, 2, 4] as const)[rnd.int(3)] as 1 | 2 | 4;
          const [offset, length] = range(patternLength);
          const pattern = rnd.int(2 ** (8 * patternLength));
          for (let i = 0; i < length; i++) bytes[offset + i] = (pattern >>> (8 * (i % patternLength))) & 0xff;
          writing.push(b);
          what = `fill b${b} [${offset}+${length}) ${pattern}/${patternLength}`;
          issue = (wait) =>
            device.queueFill(queue, wait, signal, { buffer, offset, length }, pattern, patternLength);
          break;
        }
        case 1:
        case 2: {
          const [offset, full] = range();
          const length = kind === 1 ? Math.min(full, 256) : full;
          const source = new Uint8Array(length);
          for (let i = 0; i < length; i++) source[i] = rnd.int(256);
          bytes.set(source, offset);
          writing.push(b);
          what = `${kind === 1 ? 'update' : 'write'} b${b} [${offset}+${length})`;
          issue =
            kind === 1
              ? (wait) => device.queueUpdate(queue, wait, signal, source, { buffer, offset, length })
              : (wait) => device.queueWrite(queue, wait, signal, source, { buffer, offset, length });
          break;
        }
        case 3: {
          const s = rnd.int(BUFFERS);
          const [sourceOffset, length] = range();
          let targetOffset = rnd.int(SIZE - length + 1);
          if (s === b && sourceOffset < targetOffset + length && targetOffset < sourceOffset + length) {
            targetOffset = sourceOffset; // overlapping copies are refused: copy into another buffer
          }
          const target = s === b && targetOffset === sourceOffset ? (b + 1) % BUFFERS : b;
          const from = (model[s] as Uint8Array).slice(sourceOffset, sourceOffset + length);
          (model[target] as Uint8Array).set(from, targetOffset);
          reading.push(s);
          writing.push(target);
          what = `copy b${s} [${sourceOffset}+${length}) -> b${target} @${targetOffset}`;
          const sourceBuffer = buffers[s] as Buffer;
          const targetBuffer = buffers[target] as Buffer;
          issue = (wait) =>
            device.queueCopy(
              queue,
              wait,
              signal,
              { buffer: sourceBuffer, offset: sourceOffset, length },
              { buffer: targetBuffer, offset: targetOffset, length },
            );
          break;
        }
        case 4: {
          const offset = rnd.int(SIZE / align) * align;
          const length = (1 + rnd.int((SIZE - offset) / 4)) * 4;
          const which = rnd.int(ADDS.length);
          const add = ADDS[which] as number;
          const view = new DataView(bytes.buffer, offset, length);
          for (let i = 0; i < length; i += 4) view.setUint32(i, (view.getUint32(i, true) + add) >>> 0, true);
          writing.push(b);
          what = `add_const ${add} b${b} [${offset}+${length})`;
          const cb = adds[which] as CommandBuffer;
          issue = (wait) => device.queueExecute(queue, wait, signal, [cb], [[{ buffer, offset, length }]]);
          break;
        }
        default: {
          const [offset, length] = range();
          const out = new Uint8Array(length);
          reads.push({ op, out, expected: bytes.slice(offset, offset + length) });
          reading.push(b);
          what = `read b${b} [${offset}+${length})`;
          issue = (wait) => device.queueRead(queue, wait, signal, { buffer, offset, length }, out);
        }
      }
      for (const r of reading) {
        const w = lastWriter[r];
        if (w !== undefined) deps.add(w);
      }
      for (const w of writing) {
        const last = lastWriter[w];
        if (last !== undefined) deps.add(last);
        for (const r of readers[w] as number[]) deps.add(r);
      }
      if (op > 0 && rnd.chance(0.3)) deps.add(rnd.int(op));
      for (const r of reading) (readers[r] as number[]).push(op);
      for (const w of writing) {
        lastWriter[w] = op;
        readers[w] = [];
      }
      const wait = Fence.join(...[...deps].map((d) => (issued[d] as Issued).signal));
      log.push(`#${op} q${queue === Q0 ? 0 : 1} ${what} after [${[...deps].join(',')}]`);
      issue(wait);
      issued.push({ signal, semaphore, what });
    }
    for (const [op, { semaphore, what }] of issued.entries()) {
      const o = await outcome(semaphore, 1, `op #${op} ${what}`);
      if (o !== 'ok') throw new Error(`op #${op} ${what} failed: ${o.message}\n${log.join('\n')}`);
    }
    for (const { op, out, expected } of reads) expectBytes(out, expected, `read #${op}`);
    for (let i = 0; i < BUFFERS; i++) {
      expectBytes(
        await readBytes(device, buffers[i] as Buffer),
        model[i] as Uint8Array,
        `final bytes of b${i}`,
      );
    }
  } finally {
    await bounded(device.destroy(), 'destroy');
  }
}

describe.each(all)('random two-queue programs on $name', (backend) => {
  describe.skipIf(!backend.available)(title(backend), () => {
    it.each(SEEDS)('seed %i matches the sequential reference', async (seed) => {
      try {
        await runProgram(backend, seed);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        expect.fail(
          `random program failed on ${backend.name} with seed ${seed} (FAULT_SEED=${seed}): ${message}`,
        );
      }
    });
  });
});
