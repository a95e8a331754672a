/**
 * Executes operations of one queue over device memory. Task mode runs one Executor per worker thread,
 * all over the queue's shared control block; sync mode runs one on the main thread over a private one.
 *
 * Work distribution (see control-block.ts): every command contributes work items (a dispatch one per
 * workgroup, a fill or copy one per TRANSFER_CHUNK bytes, an update one) to the queue's item stream.
 * Each executor walks the same commands in the same order and claims items with one atomic add, so a
 * dispatch's workgroups are spread over the workers that are free. Barriers (recorded ones, one before
 * each indirect dispatch, one between command buffers and one before each operation) wait until every
 * earlier item finished. Each operation ends with a completion item, run by whichever executor claims
 * it, that reports the completion once all of the operation's items finished.
 *
 * Errors: a kernel that throws (or a command that cannot run) fails its operation: the first error is
 * reported once, later items of the operation are skipped, and the operation still completes, so no
 * waiter hangs. The executor itself never throws out of `execute`.
 *
 * Async kernels: a kernel may return a promise (thenable). The executor then suspends: `execute`
 * returns that promise with the workgroup's item still unfinished, and the host hands it to `settle`,
 * which resumes the walk each time it settled; only then is the item finished (so barriers, later
 * commands and the operation's completion wait for it) and the walk goes on. A rejection fails the
 * operation like a throw. One executor runs one workgroup at a time, so the context a kernel received
 * stays valid across its awaits. The host must not start another operation on a suspended executor.
 *
 * One file past ~600 lines on purpose: the item walk, its claims, barriers, suspension and completion
 * share the executor's cursor state and are one loop; traces' dispatch timing already lives in
 * cpu-profiler.ts.
 */
import { describeValue, ErrorCode, KeelError } from '@keel/fence';
import { copyBytes, fillBytes } from './byte-ops';
import { CTL_CLAIM, CTL_DONE, CTL_FAILED_BASE, CTL_SLEEPERS, RING_MASK, SPIN_LIMIT } from './control-block';
import { openProfileEntry, type ProfileRing, profileNow } from './cpu-profiler';
import { type Kernel, type KernelBinding, KernelBindingSlot, type KernelContext } from './kernel-abi';
import {
  CMD_STRIDE,
  Field,
  MAX_DISPATCH_ITEMS,
  MAX_WORKGROUP_COUNT,
  Opcode,
  type PlanArrays,
  REF_STRIDE,
  RESOLVED_STRIDE,
  TRANSFER_CHUNK,
} from './plan-format';

/** A kernel as loaded by an executor's host. */
export interface LoadedKernel {
  /** "kernel 'abs' of executable 'x'": how failures name it. */
  readonly name: string;
  readonly fn: Kernel;
  readonly workgroupSize: readonly [number, number, number];
}

/** What an executor needs from the thread it runs on. */
export interface ExecutorHost {
  /** Memory by slab index (undefined once released). */
  readonly slabs: readonly (ArrayBufferLike | undefined)[];
  kernel(executable: number, entry: number): LoadedKernel | undefined;
  /** Called once per failing operation, with the first error. */
  reportFailure(seq: number, error: unknown): void;
  /** Called by the completion item once every other item of operation `seq` finished. */
  reportComplete(seq: number): void;
}

/** A plan plus per-thread caches (constant views per command), created once per plan per thread. */
export interface PlanRuntime {
  readonly arrays: PlanArrays;
  /** Per command: its constants as u32 and as f32, made at its first dispatch on this thread. */
  readonly constants: ([Uint32Array, Float32Array] | undefined)[];
}

/** The runtime of a plan on this thread. */
export function planRuntime(arrays: PlanArrays): PlanRuntime {
  return { arrays, constants: [] };
}

/** OUT_OF_RANGE unless `x`×`y`×`z` workgroups are within the device limits; `what` names the dispatch. */
export function checkWorkgroupCount(what: string, x: number, y: number, z: number): void {
  const max = MAX_WORKGROUP_COUNT;
  if (!(x <= max && y <= max && z <= max && x * y * z <= MAX_DISPATCH_ITEMS)) {
    throw new KeelError(
      ErrorCode.OUT_OF_RANGE,
      `${what}: workgroup count [${x}, ${y}, ${z}] exceeds the device limit (${max} per dimension, ${MAX_DISPATCH_ITEMS} in all)`,
    );
  }
}

/** No plans, no tables: what the executor holds between operations. */
const NONE: readonly never[] = [];

/** What `execute` returns while an async kernel's workgroup is pending. */
export type Suspension = PromiseLike<unknown>;

/** A promise or promise-like value (anything with a `then` method). */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/** The context the executor hands every workgroup (rewritten in place, see kernel-abi.ts). */
interface MutableContext extends KernelContext {
  workgroupId: [number, number, number];
  workgroupCount: [number, number, number];
  workgroupSize: readonly [number, number, number];
  bindings: readonly KernelBinding[];
  constants: Uint32Array;
  constantsF32: Float32Array;
}

export class Executor {
  /** True while this executor holds a claimed item index it has not run yet. */
  #holding = false;
  #held = 0;
  /** Index of the first item of the command being walked (int32, wrapping). */
  #cursor = 0;
  /** Sequence number of the operation being executed. */
  #seq = 0;
  #failed = false;

  // The operation being walked (kept across a suspension on an async kernel).
  #opPlans: readonly PlanRuntime[] = NONE;
  #opTables: readonly Float64Array[] = NONE;
  #opScratch: readonly (Int32Array | undefined)[] | undefined;
  #planIndex = 0;
  #commandIndex = 0;
  #inCommand = false;
  #commandStart = 0;
  #commandEnd = 0;

  // The dispatch set up for this executor's items (lazily, at its first item), by the index of the
  // command's first item: unique per run of a command, even of one plan run twice with two tables
  // (0.5: none).
  #setupStart = 0.5;
  #kernelFn: Kernel | undefined;
  #kernelName = 'kernel';
  readonly #context: MutableContext;
  readonly #bindingSlots: KernelBindingSlot[] = [];
  readonly #bindingLists: KernelBindingSlot[][] = [[]];

  // Workgroup count of the indirect dispatch being walked.
  readonly #indirect = new Uint32Array(3);

  // Dispatch profiling (cpu-profiler.ts): no ring when no trace wants dispatch times. The entry being
  // written (float64 index) and the first item of the command it times (0.5: none).
  #profile: ProfileRing | undefined;
  #profileAt = 0;
  #profileCommand = 0.5;

  // Result of resolve().
  #rMemory: ArrayBufferLike | undefined;
  #rOffset = 0;
  #rLength = 0;

  readonly #control: Int32Array;
  readonly #shared: boolean;
  readonly #host: ExecutorHost;

  /**
   * @param control the queue's control block (shared with the other executors of the queue).
   * @param shared true when other executors share `control` (then barriers may sleep).
   */
  constructor(control: Int32Array, shared: boolean, host: ExecutorHost, workerIndex: number) {
    this.#control = control;
    this.#shared = shared;
    this.#host = host;
    this.#context = {
      workgroupId: [0, 0, 0],
      workgroupCount: [0, 0, 0],
      workgroupSize: [1, 1, 1],
      bindings: [],
      constants: new Uint32Array(0),
      constantsF32: new Float32Array(0),
      workerIndex,
    };
  }

  /**
   * Executes operation `seq`: the plans in order with `tables[i]` resolving plan i's references, and
   * `scratch[i]` (4 int32 per indirect dispatch, zeroed) when several executors share the queue.
   * Returns undefined once this executor's part is done, or the promise of an async kernel's workgroup
   * it suspended on (then call `settle` with it).
   */
  execute(
    seq: number,
    plans: readonly PlanRuntime[],
    tables: readonly Float64Array[],
    scratch: readonly (Int32Array | undefined)[] | undefined,
  ): Suspension | undefined {
    this.#seq = seq;
    this.#setupStart = 0.5;
    this.#failed = false;
    // Every item of earlier operations finished: the completion of each operation is its last item.
    this.#waitDone(this.#cursor);
    this.#refreshFailed();
    this.#opPlans = plans;
    this.#opTables = tables;
    this.#opScratch = scratch;
    // The last operation left commandIndex 0 and inCommand false (every walk ends so).
    this.#planIndex = 0;
    return this.#proceed();
  }

  /** Starts (a ring) or stops writing per-dispatch wall times for traces, from the next dispatch. */
  setProfile(ring: ProfileRing | undefined): void {
    this.#profile = ring;
    this.#profileCommand = 0.5;
  }

  /** True while suspended on an async kernel (until `settle` finished the operation). */
  suspended = false;

  /**
   * Goes on after the promise returned by `execute` or `#resume` settled: `rejected` with `reason` fails the
   * operation as a throwing kernel would. Returns as `execute` does.
   */
  #resume(rejected: boolean, reason: unknown): Suspension | undefined {
    this.suspended = false;
    if (rejected) this.#fail(this.#kernelError(reason));
    this.#finishItem();
    return this.#proceed();
  }

  /**
   * Awaits `first` (a Suspension returned by `execute`), resumes, and repeats until the operation
   * finished without suspending again. Never rejects: a rejected kernel promise fails the operation.
   */
  async settle(first: Suspension): Promise<void> {
    let pending: Suspension | undefined = first;
    while (pending) {
      let rejected = false;
      let reason: unknown;
      try {
        await pending;
      } catch (error) {
        rejected = true;
        reason = error;
      }
      pending = this.#resume(rejected, reason);
    }
  }

  #proceed(): Suspension | undefined {
    const plans = this.#opPlans;
    while (this.#planIndex < plans.length) {
      const p = this.#planIndex;
      if (p > 0 && this.#commandIndex === 0 && !this.#inCommand) this.#waitDone(this.#cursor);
      const pending = this.#runPlan(plans[p]!, this.#opTables[p]!, this.#opScratch?.[p]);
      if (pending) {
        this.suspended = true;
        return pending;
      }
      this.#planIndex = p + 1;
      this.#commandIndex = 0;
    }
    this.#opPlans = NONE;
    this.#opTables = NONE;
    this.#opScratch = undefined;
    // The completion item: waits for all other items of the operation, then reports it.
    const index = this.#cursor;
    this.#cursor = (index + 1) | 0;
    if (this.#claim() === index) {
      this.#holding = false;
      this.#waitDone(index);
      this.#host.reportComplete(this.#seq);
      this.#finishItem();
    } // else another executor claimed it (or ours lies further on)
    return undefined;
  }

  #fail(error: unknown): void {
    if (this.#failed) return;
    this.#failed = true;
    const word = CTL_FAILED_BASE + (this.#seq & RING_MASK);
    if (!Atomics.compareExchange(this.#control, word, 0, 1)) this.#host.reportFailure(this.#seq, error);
  }

  #refreshFailed(): void {
    if (!this.#failed) {
      this.#failed = Atomics.load(this.#control, CTL_FAILED_BASE + (this.#seq & RING_MASK)) !== 0;
    }
  }

  /** The item index this executor holds: the one it claimed last, or a new claim when it holds none. */
  #claim(): number {
    if (!this.#holding) {
      this.#held = Atomics.add(this.#control, CTL_CLAIM, 1);
      this.#holding = true;
    }
    return this.#held;
  }

  #finishItem(): void {
    Atomics.add(this.#control, CTL_DONE, 1);
    if (this.#shared && Atomics.load(this.#control, CTL_SLEEPERS) !== 0) {
      Atomics.notify(this.#control, CTL_DONE);
    }
  }

  /** Blocks (spins, then sleeps) until every item before `index` finished. */
  #waitDone(index: number): void {
    const control = this.#control;
    for (let spin = 0; ((Atomics.load(control, CTL_DONE) - index) | 0) < 0; spin++) {
      if (!this.#shared) {
        // A private control block has one executor, which ran every earlier item itself.
        throw new KeelError(ErrorCode.INTERNAL, 'cpu executor: barrier not reached on a private queue');
      }
      if (spin >= SPIN_LIMIT) {
        Atomics.add(control, CTL_SLEEPERS, 1);
        const done = Atomics.load(control, CTL_DONE);
        if (((done - index) | 0) < 0) Atomics.wait(control, CTL_DONE, done, 50);
        Atomics.sub(control, CTL_SLEEPERS, 1);
      }
    }
  }

  /**
   * Walks the plan's commands from `commandIndex`. For each, claims items [cursor, cursor + count) one at
   * a time and runs those it gets; the first claim beyond the command's range is kept for a later
   * command or operation. Returns an async kernel's promise to suspend on (its item unfinished).
   */
  #runPlan(plan: PlanRuntime, table: Float64Array, scratch: Int32Array | undefined): Suspension | undefined {
    const a = plan.arrays;
    const commands = a.commands;
    for (; this.#commandIndex < a.commandCount; this.#commandIndex++) {
      const c = this.#commandIndex;
      const base = c * CMD_STRIDE;
      const op = commands[base + Field.OP]!;
      if (!this.#inCommand) {
        let count = 0;
        switch (op) {
          case Opcode.BARRIER:
            this.#waitDone(this.#cursor);
            continue;
          case Opcode.FILL:
          case Opcode.COPY:
            // One item per chunk of the target.
            this.#resolve(a, table, commands[base + (op === Opcode.FILL ? Field.REF : Field.TARGET)]!);
            count = Math.ceil(this.#rLength / TRANSFER_CHUNK);
            break;
          case Opcode.UPDATE:
            count = commands[base + Field.DATA_LENGTH]! > 0 ? 1 : 0;
            break;
          case Opcode.DISPATCH:
            count = commands[base + Field.X]! * commands[base + Field.Y]! * commands[base + Field.Z]!;
            break;
          case Opcode.DISPATCH_INDIRECT:
            this.#waitDone(this.#cursor);
            count = this.#indirectCount(plan, table, base, scratch);
            break;
          default:
            continue;
        }
        if (count === 0) continue;
        this.#commandStart = this.#cursor;
        this.#commandEnd = (this.#cursor + count) | 0;
        this.#inCommand = true;
      }
      const start = this.#commandStart;
      const end = this.#commandEnd;
      const dispatch = op === Opcode.DISPATCH || op === Opcode.DISPATCH_INDIRECT;
      for (;;) {
        const held = this.#claim();
        if (((held - end) | 0) >= 0) break;
        const item = (held - start) | 0;
        this.#holding = false;
        this.#refreshFailed();
        if (!this.#failed) {
          try {
            const ring = this.#profile;
            const timed = !!ring && dispatch;
            if (timed && this.#profileCommand !== start) {
              this.#profileAt = openProfileEntry(
                ring,
                this.#context.workerIndex,
                this.#seq,
                this.#planIndex,
                c,
              );
              this.#profileCommand = start;
            }
            const pending = this.#runItem(plan, table, c, base, op, item);
            if (timed) ring.data[this.#profileAt + 5] = profileNow();
            if (pending) return pending; // finished in #resume()
          } catch (error) {
            this.#fail(dispatch ? this.#kernelError(error) : error);
          }
        }
        this.#finishItem();
      }
      this.#cursor = end;
      this.#inCommand = false;
    }
    return undefined;
  }

  /** Resolves reference `ref` of plan `a` through `table` into rMemory / rOffset / rLength. */
  #resolve(a: PlanArrays, table: Float64Array, ref: number): void {
    const refs = a.refs;
    const source = refs[ref * REF_STRIDE]!;
    const entry = source >= 0 ? source : a.slotCount + (-source - 1);
    const slab = table[entry * RESOLVED_STRIDE]!;
    const refOffset = refs[ref * REF_STRIDE + 1]!;
    const refLength = refs[ref * REF_STRIDE + 2]!;
    this.#rMemory = slab >= 0 ? this.#host.slabs[slab] : undefined;
    this.#rOffset = table[entry * RESOLVED_STRIDE + 1]! + refOffset;
    this.#rLength = refLength >= 0 ? refLength : table[entry * RESOLVED_STRIDE + 2]! - refOffset;
  }

  /**
   * Resolves `ref` (as #resolve) and returns its memory; INTERNAL when this thread does not have it.
   * `what` names the ref in that error (a number: that dispatch binding).
   */
  #resolveMemory(a: PlanArrays, table: Float64Array, ref: number, what: string | number): ArrayBufferLike {
    this.#resolve(a, table, ref);
    const memory = this.#rMemory;
    if (!memory) {
      const name = typeof what === 'number' ? `dispatch binding ${what}` : what;
      throw new KeelError(ErrorCode.INTERNAL, `cpu executor: ${name} names memory this thread does not have`);
    }
    return memory;
  }

  /** The workgroup count of an indirect dispatch, agreed on by every executor of the queue. */
  #indirectCount(
    plan: PlanRuntime,
    table: Float64Array,
    base: number,
    scratch: Int32Array | undefined,
  ): number {
    const commands = plan.arrays.commands;
    const index = commands[base + Field.INDIRECT_INDEX]! * 4;
    const counts = this.#indirect;
    if (scratch && Atomics.compareExchange(scratch, index, 0, 1) !== 0) {
      // Another executor reads the parameters; wait for what it publishes.
      while (Atomics.load(scratch, index) !== 2) Atomics.wait(scratch, index, 1, 50);
      for (let i = 0; i < 3; i++) counts[i] = scratch[index + 1 + i]!;
    } else {
      counts.fill(0);
      if (!this.#failed) {
        try {
          const memory = this.#resolveMemory(
            plan.arrays,
            table,
            commands[base + Field.PARAMS_REF]!,
            'indirect dispatch parameters',
          );
          const view = new DataView(memory, this.#rOffset, 12);
          for (let i = 0; i < 3; i++) counts[i] = view.getUint32(4 * i, true);
          checkWorkgroupCount('indirect dispatch', counts[0]!, counts[1]!, counts[2]!);
        } catch (error) {
          counts.fill(0);
          this.#fail(error);
        }
      }
      if (scratch) {
        scratch.set(counts, index + 1);
        Atomics.store(scratch, index, 2);
        Atomics.notify(scratch, index);
      }
    }
    return counts[0]! * counts[1]! * counts[2]!;
  }
  #runItem(
    plan: PlanRuntime,
    table: Float64Array,
    command: number,
    base: number,
    op: number,
    item: number,
  ): Suspension | undefined {
    const a = plan.arrays;
    const commands = a.commands;
    switch (op) {
      case Opcode.DISPATCH:
      case Opcode.DISPATCH_INDIRECT: {
        if (this.#setupStart !== this.#commandStart) this.#setupDispatch(plan, table, command, base);
        const ctx = this.#context;
        const cx = ctx.workgroupCount[0];
        const cy = ctx.workgroupCount[1];
        const id = ctx.workgroupId;
        id[0] = item % cx;
        const rest = (item / cx) | 0;
        id[1] = rest % cy;
        id[2] = (rest / cy) | 0;
        const result: unknown = this.#kernelFn!(ctx);
        return isThenable(result) ? result : undefined;
      }
      case Opcode.FILL: {
        const memory = this.#resolveMemory(a, table, commands[base + Field.REF]!, 'fill target');
        const from = item * TRANSFER_CHUNK;
        const length = Math.min(TRANSFER_CHUNK, this.#rLength - from);
        fillBytes(
          memory,
          this.#rOffset + from,
          length,
          commands[base + Field.PATTERN]!,
          commands[base + Field.PATTERN_LENGTH]!,
        );
        return undefined;
      }
      case Opcode.COPY: {
        const source = this.#resolveMemory(a, table, commands[base + Field.SOURCE]!, 'copy source');
        const sourceOffset = this.#rOffset;
        const target = this.#resolveMemory(a, table, commands[base + Field.TARGET]!, 'copy target');
        const from = item * TRANSFER_CHUNK;
        const length = Math.min(TRANSFER_CHUNK, this.#rLength - from);
        copyBytes(source, sourceOffset + from, target, this.#rOffset + from, length);
        return undefined;
      }
      case Opcode.UPDATE: {
        const target = this.#resolveMemory(a, table, commands[base + Field.REF]!, 'update target');
        const start = commands[base + Field.DATA_START]!;
        const length = commands[base + Field.DATA_LENGTH]!;
        new Uint8Array(target, this.#rOffset, length).set(a.data.subarray(start, start + length));
        return undefined;
      }
    }
  }

  /** Wraps what a kernel threw: same code for a KeelError, INTERNAL otherwise; the message names it. */
  #kernelError(error: unknown): KeelError {
    const what = this.#kernelName;
    if (KeelError.is(error)) return new KeelError(error.code, `${what}: ${error.message}`, { cause: error });
    const message = error instanceof Error ? `${error.name}: ${error.message}` : describeValue(error);
    return new KeelError(ErrorCode.INTERNAL, `${what} threw ${message}`, { cause: error });
  }

  #setupDispatch(plan: PlanRuntime, table: Float64Array, command: number, base: number): void {
    const a = plan.arrays;
    const commands = a.commands;
    this.#setupStart = this.#commandStart;
    const ctx = this.#context;
    const kernel = this.#host.kernel(commands[base + Field.EXECUTABLE]!, commands[base + Field.ENTRY]!);
    if (!kernel) {
      this.#setupStart = 0.5;
      this.#kernelName = 'kernel';
      throw new KeelError(
        ErrorCode.INTERNAL,
        'cpu executor: dispatch of a kernel this thread has not loaded',
      );
    }
    this.#kernelFn = kernel.fn;
    this.#kernelName = kernel.name;
    ctx.workgroupSize = kernel.workgroupSize;
    const direct = commands[base + Field.OP] === Opcode.DISPATCH;
    for (let i = 0; i < 3; i++)
      ctx.workgroupCount[i] = direct ? commands[base + Field.X + i]! : this.#indirect[i]!;
    let views = plan.constants[command];
    if (!views) {
      const start = commands[base + Field.CONST_START]!;
      const u32 = a.constants.subarray(start, start + commands[base + Field.CONST_COUNT]!);
      views = [u32, new Float32Array(u32.buffer, u32.byteOffset, u32.length)];
      plan.constants[command] = views;
    }
    ctx.constants = views[0];
    ctx.constantsF32 = views[1];
    const bindStart = commands[base + Field.BIND_START]!;
    const bindCount = commands[base + Field.BIND_COUNT]!;
    const list = this.#bindingList(bindCount);
    for (let i = 0; i < bindCount; i++) {
      const memory = this.#resolveMemory(a, table, a.bindingRefs[bindStart + i]!, i);
      list[i]!.reset(memory, this.#rOffset, this.#rLength);
    }
    ctx.bindings = list;
  }

  #bindingList(count: number): KernelBindingSlot[] {
    let list = this.#bindingLists[count];
    if (!list) {
      while (this.#bindingSlots.length < count) {
        this.#bindingSlots.push(new KernelBindingSlot(this.#bindingSlots.length));
      }
      list = this.#bindingSlots.slice(0, count);
      this.#bindingLists[count] = list;
    }
    return list;
  }
}
