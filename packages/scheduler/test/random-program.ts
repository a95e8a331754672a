/**
 * A randomized program for the forward-progress tests: fills, updates, copies and `mix` dispatches
 * over a few buffers, with dependencies that order every conflicting pair of accesses plus random extra
 * edges, lanes (shared timeline semaphores) and a random affinity mask per operation. `model` is its
 * sequential meaning; `runProgram` submits it through a Scheduler on any device that has a `mix` kernel.
 */
import { Fence, type Timepoint } from '@keel/fence';
import type { Buffer, Device, Executable } from '@keel/hal';
import type { Scheduler } from '../src/index';
import { random, readBack, USAGE } from './helpers';

export const OPS = 200;
export const BUFFERS = 6;
const WORDS = 256;
const BYTES = WORDS * 4;
const LANES = 4;

type Body =
  | {
      readonly kind: 'fill';
      readonly buffer: number;
      readonly offset: number;
      readonly length: number;
      readonly pattern: number;
    }
  | { readonly kind: 'update'; readonly buffer: number; readonly offset: number; readonly data: Uint32Array }
  | {
      readonly kind: 'copy';
      readonly source: number;
      readonly sourceOffset: number;
      readonly target: number;
      readonly targetOffset: number;
      readonly length: number;
    }
  | {
      readonly kind: 'dispatch';
      readonly a: number;
      readonly b: number;
      readonly out: number;
      readonly c: number;
    };

export interface GraphOp {
  readonly body: Body;
  /** Lane whose timeline this op advances, or -1 for a semaphore of its own. */
  readonly lane: number;
  /** Earlier ops it waits for (hazards, its lane's previous op, random extra edges). */
  readonly deps: readonly number[];
  /** Affinity mask for the "random masks" run (non-empty subset of 4 targets). */
  readonly mask: number;
}

/** A random program whose dependencies order every conflicting pair of accesses. */
export function generate(seed: number, count = OPS): GraphOp[] {
  const rnd = random(seed);
  const int = (n: number): number => Math.floor(rnd() * n);
  const lastWrite: (number | undefined)[] = new Array(BUFFERS).fill(undefined);
  const readsSince: number[][] = Array.from({ length: BUFFERS }, () => []);
  const laneLast: (number | undefined)[] = new Array(LANES).fill(undefined);
  const ops: GraphOp[] = [];
  for (let i = 0; i < count; i++) {
    let body: Body;
    const r = rnd();
    if (r < 0.25) {
      const first = int(WORDS);
      const words = 1 + int(WORDS - first);
      body = {
        kind: 'fill',
        buffer: int(BUFFERS),
        offset: first * 4,
        length: words * 4,
        pattern: Math.floor(rnd() * 2 ** 32),
      };
    } else if (r < 0.35) {
      const words = 1 + int(16);
      const offset = int(WORDS - words + 1) * 4;
      body = {
        kind: 'update',
        buffer: int(BUFFERS),
        offset,
        data: Uint32Array.from({ length: words }, () => Math.floor(rnd() * 2 ** 32)),
      };
    } else if (r < 0.65) {
      const source = int(BUFFERS);
      const target = (source + 1 + int(BUFFERS - 1)) % BUFFERS;
      const words = 1 + int(WORDS);
      body = {
        kind: 'copy',
        source,
        sourceOffset: int(WORDS - words + 1) * 4,
        target,
        targetOffset: int(WORDS - words + 1) * 4,
        length: words * 4,
      };
    } else {
      // Three distinct buffers: WebGPU binds every storage buffer read-write, and writable bindings of
      // one buffer must not alias. (A partial Fisher-Yates shuffle of the buffer indices.)
      const pool = Array.from({ length: BUFFERS }, (_, k) => k);
      for (let k = 0; k < 3; k++) {
        const j = k + int(BUFFERS - k);
        [pool[k], pool[j]] = [pool[j]!, pool[k]!];
      }
      const [out, a, b] = pool as [number, number, number];
      body = { kind: 'dispatch', a, b, out, c: Math.floor(rnd() * 2 ** 32) };
    }
    const reads: number[] =
      body.kind === 'copy' ? [body.source] : body.kind === 'dispatch' ? [body.a, body.b] : [];
    const writes: number[] =
      body.kind === 'copy' ? [body.target] : body.kind === 'dispatch' ? [body.out] : [body.buffer];
    const deps = new Set<number>();
    for (const x of reads) {
      const w = lastWrite[x];
      if (w !== undefined) deps.add(w);
    }
    for (const x of writes) {
      const w = lastWrite[x];
      if (w !== undefined) deps.add(w);
      for (const reader of readsSince[x]!) deps.add(reader);
    }
    const lane = rnd() < 0.5 ? int(LANES) : -1;
    if (lane >= 0 && laneLast[lane] !== undefined) deps.add(laneLast[lane]!);
    if (i > 0 && rnd() < 0.3) deps.add(int(i));
    for (const x of reads) readsSince[x]!.push(i);
    for (const x of writes) {
      lastWrite[x] = i;
      readsSince[x] = [];
    }
    if (lane >= 0) laneLast[lane] = i;
    deps.delete(i);
    ops.push({ body, lane, deps: [...deps].sort((x, y) => x - y), mask: 1 + int(15) });
  }
  return ops;
}

/** The sequential meaning of the program: program order is a valid order of its dependency graph. */
export function model(ops: readonly GraphOp[]): Uint8Array[] {
  const mem = Array.from({ length: BUFFERS }, () => new Uint8Array(BYTES));
  for (const { body } of ops) {
    switch (body.kind) {
      case 'fill':
        new Uint32Array(mem[body.buffer]!.buffer, body.offset, body.length / 4).fill(body.pattern);
        break;
      case 'update':
        mem[body.buffer]!.set(new Uint8Array(body.data.buffer), body.offset);
        break;
      case 'copy':
        mem[body.target]!.set(
          mem[body.source]!.subarray(body.sourceOffset, body.sourceOffset + body.length),
          body.targetOffset,
        );
        break;
      case 'dispatch': {
        const a = new Uint32Array(mem[body.a]!.buffer);
        const b = new Uint32Array(mem[body.b]!.buffer);
        const out = new Uint32Array(mem[body.out]!.buffer);
        const next = new Uint32Array(WORDS);
        for (let i = 0; i < WORDS; i++) next[i] = ((Math.imul(a[i]!, 0x9e3779b1) ^ b[i]!) + body.c) >>> 0;
        out.set(next);
        break;
      }
    }
  }
  return mem;
}

/** Runs the program through `scheduler` (targets on `device`); `masked` uses each op's random mask. */
export async function runProgram(
  device: Device,
  executable: Executable,
  scheduler: Scheduler,
  ops: readonly GraphOp[],
  masked: boolean,
): Promise<Uint8Array[]> {
  const buffers: Buffer[] = Array.from({ length: BUFFERS }, (_, i) =>
    device.createBuffer({ usage: USAGE, byteLength: BYTES, label: `b${i}` }),
  );
  const lanes = Array.from({ length: LANES }, (_, i) => ({
    semaphore: device.createSemaphore(0),
    value: 0,
    i,
  }));
  const signals: Timepoint[] = [];
  for (const op of ops) {
    const wait = Fence.of(...op.deps.map((d) => signals[d]!));
    let tp: Timepoint;
    if (op.lane >= 0) {
      const lane = lanes[op.lane]!;
      lane.value++;
      tp = { semaphore: lane.semaphore, value: lane.value };
    } else {
      tp = { semaphore: device.createSemaphore(0), value: 1 };
    }
    signals.push(tp);
    const options = {
      wait,
      signal: Fence.of(tp),
      affinity: masked ? maskFor(op, scheduler.allTargets) : undefined,
    };
    const body = op.body;
    switch (body.kind) {
      case 'fill':
        scheduler.submit(
          {
            kind: 'fill',
            target: { buffer: buffers[body.buffer]!, offset: body.offset, length: body.length },
            pattern: body.pattern,
            patternLength: 4,
          },
          options,
        );
        break;
      case 'update':
        scheduler.submit(
          {
            kind: 'update',
            source: body.data,
            target: { buffer: buffers[body.buffer]!, offset: body.offset },
          },
          options,
        );
        break;
      case 'copy':
        scheduler.submit(
          {
            kind: 'copy',
            source: { buffer: buffers[body.source]!, offset: body.sourceOffset, length: body.length },
            target: { buffer: buffers[body.target]!, offset: body.targetOffset, length: body.length },
          },
          options,
        );
        break;
      case 'dispatch': {
        const cb = device.createCommandBuffer({ mode: 'one-shot' });
        cb.begin();
        cb.dispatch(executable, 'mix', {
          workgroupCount: [WORDS / 64, 1, 1],
          constants: [body.c],
          bindings: [
            { buffer: buffers[body.a]! },
            { buffer: buffers[body.b]! },
            { buffer: buffers[body.out]! },
          ],
        });
        cb.end();
        scheduler.submit({ kind: 'execute', commandBuffers: [cb] }, options);
        break;
      }
    }
  }
  const done = Fence.of(...signals);
  await done.wait({ timeoutMs: 20_000 });
  const out: Uint8Array[] = [];
  for (const buffer of buffers) out.push(await readBack(scheduler, buffer));
  for (const buffer of buffers) buffer.destroy();
  return out;
}

/** The op's random mask cut to the scheduler's targets (all of them if nothing is left). */
export function maskFor(op: GraphOp, allTargets: number): number {
  return op.mask & allTargets || allTargets;
}

/** Hex string of bytes (fast to compare, readable in a failure). */
export function hex(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}
