/**
 * Helpers of the cases that submit many small queue operations: a chain orders them one after the other
 * on one timeline (operations that fences do not order never share a semaphore), so a case waits once
 * instead of once per operation; `writeAll` and `readAll` are the suite's write and read over a chain.
 */
import { Fence } from '@keel/fence';
import type { Buffer, QueueAffinity } from '@keel/hal';
import { CtsAssertionError } from '../assertions';
import type { CtsContext } from '../context';

/** The affinity, wait fence and signal fence of one operation of a chain. */
export interface ChainLink {
  readonly queue: QueueAffinity;
  readonly wait: Fence;
  readonly signal: Fence;
}

/** Operations ordered one after the other on one timeline. */
export interface Chain {
  /** The next operation's link: it waits for the previous one's signal. */
  next(): ChainLink;
  /** Waits (with the suite's timeout) for the signal of every link handed out so far. */
  done(): Promise<void>;
}

/** A chain on a fresh semaphore; with `alternate`, its links alternate between queue 0 and queue 1. */
export function chain(ctx: CtsContext, alternate = false): Chain {
  const semaphore = ctx.semaphore();
  let value = 0;
  return {
    next() {
      const queue = ctx.queue(alternate ? value : 0);
      const wait = value === 0 ? Fence.empty : Fence.of({ semaphore, value });
      value += 1;
      return { queue, wait, signal: Fence.of({ semaphore, value }) };
    },
    done: () => semaphore.wait(value, { timeoutMs: ctx.timeoutMs }),
  };
}

/** Writes each `[buffer, bytes]` at offset 0 (one chain), and waits once. */
export async function writeAll(
  ctx: CtsContext,
  writes: readonly (readonly [Buffer, ArrayBufferView])[],
): Promise<void> {
  const c = chain(ctx);
  for (const [buffer, data] of writes) {
    const { queue, wait, signal } = c.next();
    ctx.device.queueWrite(queue, wait, signal, data, { buffer, offset: 0, length: data.byteLength });
  }
  await c.done();
}

/** The whole contents of each buffer (one chain of reads, one wait). */
export async function readAll(ctx: CtsContext, buffers: readonly Buffer[]): Promise<Uint8Array[]> {
  const c = chain(ctx);
  const out = buffers.map((buffer) => {
    const host = new Uint8Array(buffer.byteLength);
    const { queue, wait, signal } = c.next();
    ctx.device.queueRead(queue, wait, signal, { buffer }, host);
    return host;
  });
  await c.done();
  return out;
}

/** Waits for `fence`; a failure or timeout is rethrown as an assertion that names `what`. */
export async function settled(ctx: CtsContext, fence: Fence, what: string): Promise<void> {
  try {
    await ctx.wait(fence);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new CtsAssertionError(
      `${what}: expected its signal, got ${typeof code === 'string' ? `${code}: ` : ''}${String((error as Error).message ?? error)}`,
    );
  }
}
