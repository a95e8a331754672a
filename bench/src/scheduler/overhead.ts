/**
 * Scheduling overhead: the time `Scheduler.submit` adds to a direct `Device` call. Both variants submit
 * the same prebuilt chain of barriers (each waits on a gate and on its predecessor, and signals the
 * next value of one semaphore); only the submission loop is timed, then the gate opens and the chain
 * drains untimed. The difference per operation is validation, placement (producer lookup, load scan),
 * bookkeeping (in-flight counter, completion registration, producer record) and counters.
 */
import { Fence, type Semaphore } from '@keel/fence';
import type { Device } from '@keel/hal';
import type { Scheduler } from '@keel/scheduler';

export interface PreparedChain {
  readonly gate: Semaphore;
  readonly chain: Semaphore;
  readonly waits: readonly Fence[];
  readonly signals: readonly Fence[];
}

/** Builds the fences of a chain of `count` barriers (outside the timed region). */
export function prepareChain(device: Device, count: number): PreparedChain {
  const gate = device.createSemaphore(0);
  const chain = device.createSemaphore(0);
  const waits: Fence[] = [];
  const signals: Fence[] = [];
  for (let k = 0; k < count; k++) {
    waits.push(Fence.of({ semaphore: gate, value: 1 }, { semaphore: chain, value: k }));
    signals.push(Fence.of({ semaphore: chain, value: k + 1 }));
  }
  return { gate, chain, waits, signals };
}

const BARRIER = { kind: 'barrier' } as const;

/** Milliseconds to submit the chain directly to `device` queue 0. */
export function submitDirect(device: Device, prepared: PreparedChain): number {
  const { waits, signals } = prepared;
  const start = performance.now();
  for (let k = 0; k < waits.length; k++) device.queueBarrier(1, waits[k]!, signals[k]!);
  return performance.now() - start;
}

/** Milliseconds to submit the chain through `scheduler` (placement free: mask ANY). */
export function submitScheduled(scheduler: Scheduler, prepared: PreparedChain): number {
  const { waits, signals } = prepared;
  const start = performance.now();
  for (let k = 0; k < waits.length; k++)
    scheduler.submit(BARRIER, { wait: waits[k], signalFence: signals[k] });
  return performance.now() - start;
}

/** Opens the gate and waits until the whole chain ran. */
export async function drain(prepared: PreparedChain): Promise<void> {
  prepared.gate.signal(1);
  await prepared.chain.wait(prepared.waits.length, { timeoutMs: 60_000 });
}
