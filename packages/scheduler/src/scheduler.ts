/**
 * The Scheduler: one affinity-aware front over several (device, queue) targets. Bit i of its affinity
 * masks selects target i. `submit(op, { affinity, wait, signalFence })` takes every queue operation of
 * the Device contract as a QueueOperation, picks a target by the PlacementPolicy and forwards the operation
 * to that target's device with the affinity of that target's queue.
 *
 * Contracts:
 * - Allowed targets = affinity ∩ targets ∩ (targets of the device that holds the operation's buffers or
 *   command buffers, and of those the queues in each command buffer's affinity) minus targets whose
 *   device was lost (known from `device.lost`, and synchronously from `device.lostReason` where the
 *   device has it, so a submit in the same turn as a loss or `destroy()` sees it too). Empty because of the mask or the device: INVALID_ARGUMENT naming the mask; empty
 *   only because the devices were lost or destroyed: FAILED_PRECONDITION.
 * - A wait timepoint that is not reached and whose producer (the target that last signalled its
 *   semaphore through this scheduler) is on a lost or destroyed device: FAILED_PRECONDITION, at once,
 *   instead of an operation that could never start.
 * - Submit options are checked as constructor options are (INVALID_ARGUMENT for a non-object or an
 *   unknown key, naming it); `flush` masks as submit's masks.
 * - A wait timepoint that failed does not make an operation unplaceable, even if its producer was
 *   lost: the device that takes it fails its signal ABORTED with the failure as cause.
 * - Argument errors of the device propagate unchanged (nothing enqueued, no state changed).
 * - An operation with an empty signal fence gets a private one-timepoint fence of a semaphore the
 *   chosen device creates, so that it still counts as in flight until it completed.
 * - Ordering comes only from fences, as for a Device: the scheduler adds no waits of its own, so
 *   running everything on one target is always correct (the forward-progress guarantee).
 */
import { describeValue, ErrorCode, Fence, KeelError, type Semaphore } from '@keel/fence';
import {
  type Buffer,
  type CommandBuffer,
  checkOptions,
  type Device,
  type DirectBufferRef,
  describeBuffer,
  type OptionRules,
  QueueAffinity,
} from '@keel/hal';
import { isFence } from '@keel/hal/driver';
import { PlacementPolicy } from './placement-policy';
import { PLACEMENT_REASONS, type PlacementRecord, type SchedulerStats } from './placement-record';
import { PlacementTrace } from './placement-trace';
import type { AllocaOperation, QueueOperation, QueueOperationKind, SubmitOptions } from './queue-operation';
import { checkTargets, describeTarget, type SchedulerTarget } from './scheduler-target';
import { checkSubmitOptions } from './submit-options';

export interface SchedulerOptions {
  /**
   * Keep a trace of placement decisions: `true` keeps the latest 1024, a number keeps that many
   * (a positive integer). Off by default; counters are always kept.
   */
  readonly trace?: boolean | number;
}

/** Every operation that is not an alloca: `submit` returns the chosen target's index for these. */
export type NonAllocaOperation = Exclude<QueueOperation, AllocaOperation>;

const DEFAULT_TRACE_CAPACITY = 1024;

/** The options a Scheduler takes (unknown keys and wrong types are INVALID_ARGUMENT). */
const OPTION_RULES: OptionRules = {
  trace: {
    type: 'custom',
    expected: 'a boolean or a positive integer',
    check: (v) => typeof v === 'boolean' || (typeof v === 'number' && Number.isSafeInteger(v) && v >= 1),
  },
};

/** How messages name each kind of submission (constants: nothing is built per call). */
const WHAT: Readonly<Record<QueueOperationKind, string>> = {
  alloca: "Scheduler.submit 'alloca'",
  dealloca: "Scheduler.submit 'dealloca'",
  execute: "Scheduler.submit 'execute'",
  fill: "Scheduler.submit 'fill'",
  update: "Scheduler.submit 'update'",
  copy: "Scheduler.submit 'copy'",
  read: "Scheduler.submit 'read'",
  write: "Scheduler.submit 'write'",
  barrier: "Scheduler.submit 'barrier'",
  'host-call': "Scheduler.submit 'host-call'",
};

function hex(mask: number): string {
  return `0x${(mask >>> 0).toString(16)}`;
}

/**
 * The signal fence of submit options: `signalFence`, else the deprecated alias `signal`, else
 * Fence.empty. Either must be a Fence; both given and different is INVALID_ARGUMENT. Allocation-free.
 */
function signalFenceOf(options: SubmitOptions | undefined, what: string): Fence {
  const signalFence = options?.signalFence;
  const alias = options?.signal;
  if (signalFence !== undefined && !isFence(signalFence)) {
    throw new KeelError(
      ErrorCode.INVALID_ARGUMENT,
      `${what}: signalFence is not a Fence (got ${describeValue(signalFence)})`,
    );
  }
  if (alias !== undefined && !isFence(alias)) {
    throw new KeelError(
      ErrorCode.INVALID_ARGUMENT,
      `${what}: signal (deprecated alias of signalFence) is not a Fence (got ${describeValue(alias)})`,
    );
  }
  if (signalFence !== undefined && alias !== undefined && signalFence !== alias) {
    throw new KeelError(
      ErrorCode.INVALID_ARGUMENT,
      `${what}: signalFence and its deprecated alias signal name different fences (give signalFence only)`,
    );
  }
  return signalFence ?? alias ?? Fence.empty;
}

export class Scheduler {
  /** The targets, in bit order. */
  readonly targets: readonly SchedulerTarget[];
  /** Mask of every target. */
  readonly allTargets: number;

  readonly #labels: readonly string[];
  /** Device-level affinity of each target's queue (1 << queue). */
  readonly #queueBit: Int32Array;
  /** Mask of the targets of each device. */
  readonly #deviceTargets = new Map<Device, number>();
  /** The devices and their target masks, as arrays: read by every submit with no iterator allocated. */
  readonly #devices: Device[] = [];
  readonly #deviceMasks: number[] = [];
  readonly #policy: PlacementPolicy;
  readonly #trace: PlacementTrace | undefined;

  #submitted = 0;
  readonly #byReason = new Float64Array(PLACEMENT_REASONS.length);
  readonly #perTarget: Float64Array;
  #eligible = 0;
  #onProducer = 0;
  #lastTarget = -1;

  /**
   * @param targets 1..32 distinct (device, queue) pairs; target i is bit i. `targetsOf(...devices)`
   *   lists every queue of some devices.
   */
  constructor(targets: readonly SchedulerTarget[], rawOptions?: SchedulerOptions) {
    const options = checkOptions<SchedulerOptions>('Scheduler', rawOptions, OPTION_RULES);
    checkTargets(targets);
    this.targets = Object.freeze(targets.slice());
    this.allTargets = QueueAffinity.firstN(targets.length);
    this.#labels = targets.map((t, i) => describeTarget(i, t));
    this.#queueBit = Int32Array.from(targets, (t) => 1 << t.queue);
    this.#perTarget = new Float64Array(targets.length);
    this.#policy = new PlacementPolicy(this.#labels);
    targets.forEach((t, i) => {
      this.#deviceTargets.set(t.device, ((this.#deviceTargets.get(t.device) ?? 0) | (1 << i)) >>> 0);
    });
    for (const [device, mask] of this.#deviceTargets) {
      this.#devices.push(device);
      this.#deviceMasks.push(mask);
      device.lost.then(
        () => this.#policy.markLost(mask),
        () => this.#policy.markLost(mask),
      );
    }
    const trace = options.trace ?? false;
    if (trace === false) {
      this.#trace = undefined;
    } else {
      const capacity = trace === true ? DEFAULT_TRACE_CAPACITY : trace;
      if (!Number.isSafeInteger(capacity) || capacity < 1) {
        throw new KeelError(
          ErrorCode.INVALID_ARGUMENT,
          `Scheduler: trace capacity must be a positive integer, got ${describeValue(capacity)}`,
        );
      }
      this.#trace = new PlacementTrace(capacity);
    }
  }

  /** Index of the target the latest successful `submit` chose (-1 before the first). */
  get lastTarget(): number {
    return this.#lastTarget;
  }

  /**
   * Mask of the targets whose device was lost or destroyed (observed through `device.lost`, or at once
   * through `device.lostReason`).
   */
  get lostTargets(): number {
    this.#noticeLosses();
    return this.#policy.lostMask;
  }

  /** Marks lost the targets of every device whose `lostReason` is set (before `lost` resolves). */
  #noticeLosses(): void {
    const devices = this.#devices;
    for (let i = 0; i < devices.length; i++) {
      if (devices[i]!.lostReason !== undefined) this.#policy.markLost(this.#deviceMasks[i]!);
    }
  }

  /** Mask of the targets on `device` (0 if it is not one of the scheduler's devices). */
  targetsOfDevice(device: Device): number {
    return this.#deviceTargets.get(device) ?? 0;
  }

  /** Index of the target that last signalled `semaphore` through this scheduler, or undefined. */
  producerOf(semaphore: Semaphore): number | undefined {
    return this.#policy.producerOf(semaphore);
  }

  /**
   * Places and submits a queue operation; see the class contract. Returns the new buffer for an
   * `alloca`, the chosen target's index for every other kind (`lastTarget` has it in both cases).
   */
  submit(op: AllocaOperation, options?: SubmitOptions): Buffer;
  submit(op: NonAllocaOperation, options?: SubmitOptions): number;
  submit(op: QueueOperation, options?: SubmitOptions): Buffer | number;
  submit(op: QueueOperation, options?: SubmitOptions): Buffer | number {
    const what = whatOf(op);
    checkSubmitOptions(options, what);
    let signal = signalFenceOf(options, what);
    const allowed = this.#allowedTargets(op, options, what);
    const wait = options?.wait ?? Fence.empty;

    const policy = this.#policy;
    const target = policy.choose(allowed, wait, what);
    const device = (this.targets[target] as SchedulerTarget).device;
    if (signal.isEmpty) signal = Fence.of({ semaphore: device.createSemaphore(0), value: 1 });
    const result = this.#forward(op, device, this.#queueBit[target]! >>> 0, wait, signal);

    policy.commit(target, signal);
    const sequence = this.#submitted++;
    this.#byReason[policy.reason]!++;
    this.#perTarget[target]!++;
    const local = (policy.producers & allowed) >>> 0;
    if (local !== 0) {
      this.#eligible++;
      if (((local >>> target) & 1) === 1) this.#onProducer++;
    }
    this.#lastTarget = target;
    this.#trace?.push(sequence, op.kind, target, PlacementPolicy.reasonName(policy.reason), policy.producers);
    return result === undefined ? target : result;
  }

  /**
   * @internal Runs the scheduler's own checks of `submit(op, options)` (the operation, the options,
   * the masks, the devices) and returns the mask of allowed targets, enqueueing nothing and changing
   * nothing. Not checked: the device's own argument checks and waits on a lost target's pending
   * timepoints (placement). copyAcrossDevices checks its write half with it before it submits the read.
   */
  checkSubmit(op: QueueOperation, options?: SubmitOptions): number {
    const what = whatOf(op);
    checkSubmitOptions(options, what);
    signalFenceOf(options, what);
    return this.#allowedTargets(op, options, what);
  }

  /** The targets `op` may go to (see the class contract), or the KeelError saying why none. */
  #allowedTargets(op: QueueOperation, options: SubmitOptions | undefined, what: string): number {
    const affinity = options?.affinity ?? QueueAffinity.ANY;
    const wait = options?.wait ?? Fence.empty;
    QueueAffinity.check(affinity, what);
    if (!isFence(wait)) throw new KeelError(ErrorCode.INVALID_ARGUMENT, `${what}: wait is not a Fence`);

    let allowed = (affinity & this.allTargets) >>> 0;
    if (allowed === 0) {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `${what}: affinity ${hex(affinity)} selects none of the scheduler's ${this.targets.length} target(s) (${hex(this.allTargets)})`,
      );
    }
    const placeable = this.#placeableTargets(op, what);
    if ((allowed & placeable) >>> 0 === 0) {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `${what}: affinity ${hex(affinity)} selects none of the targets that can run it (${hex(placeable)}: ${this.#whyPlaceable(op)})`,
      );
    }
    allowed = (allowed & placeable) >>> 0;
    this.#noticeLosses();
    const lost = this.#policy.lostMask;
    if ((allowed & lost) !== 0) {
      allowed = (allowed & ~lost) >>> 0;
      if (allowed === 0) {
        throw new KeelError(
          ErrorCode.FAILED_PRECONDITION,
          `${what}: affinity ${hex(affinity)} selects only targets whose device was destroyed or lost (${hex(lost)})`,
        );
      }
    }
    return allowed;
  }

  /**
   * Pushes deferred work of the selected targets' queues to their devices (`Device.flush`). The mask is
   * checked as submit's: not a 32-bit integer, or selecting none of the targets, is INVALID_ARGUMENT.
   */
  flush(affinity: number = QueueAffinity.ANY): void {
    const checked = QueueAffinity.check(affinity, 'Scheduler.flush');
    const mask = (checked & this.allTargets) >>> 0;
    if (mask === 0) {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `Scheduler.flush: affinity ${hex(checked)} selects none of the scheduler's ${this.targets.length} target(s) (${hex(this.allTargets)})`,
      );
    }
    this.#noticeLosses();
    for (const [device, targets] of this.#deviceTargets) {
      let queues = 0;
      let m = (targets & mask & ~this.#policy.lostMask) >>> 0;
      while (m !== 0) {
        const i = 31 - Math.clz32(m & -m);
        queues |= this.#queueBit[i]!;
        m = (m & ~(1 << i)) >>> 0;
      }
      if (queues !== 0) device.flush(queues >>> 0);
    }
  }

  /** A snapshot of the counters. */
  stats(): SchedulerStats {
    const byReason = {} as Record<(typeof PLACEMENT_REASONS)[number], number>;
    PLACEMENT_REASONS.forEach((reason, i) => {
      byReason[reason] = this.#byReason[i]!;
    });
    const lost = this.#policy.lostMask;
    return {
      submitted: this.#submitted,
      byReason,
      targets: this.targets.map((_, i) => ({
        label: this.#labels[i]!,
        submitted: this.#perTarget[i]!,
        inFlight: this.#policy.inFlight[i]!,
        lost: ((lost >>> i) & 1) === 1,
      })),
      locality: {
        eligible: this.#eligible,
        onProducer: this.#onProducer,
        share: this.#eligible === 0 ? 1 : this.#onProducer / this.#eligible,
      },
    };
  }

  /** Zeroes the counters (not `inFlight`, which tracks work still running). */
  resetStats(): void {
    this.#submitted = 0;
    this.#byReason.fill(0);
    this.#perTarget.fill(0);
    this.#eligible = 0;
    this.#onProducer = 0;
  }

  /** The traced placements, oldest first (empty when tracing is off). */
  trace(): PlacementRecord[] {
    return this.#trace?.records() ?? [];
  }

  clearTrace(): void {
    this.#trace?.clear();
  }

  /** Targets that can run `op`: every target, or the matching targets of the device it names. */
  #placeableTargets(op: QueueOperation, what: string): number {
    switch (op.kind) {
      case 'alloca':
      case 'barrier':
      case 'host-call':
        return this.allTargets;
      case 'dealloca':
        return this.#bufferTargets(op.buffer, what, 'buffer');
      case 'fill':
      case 'update':
      case 'write':
        return this.#refTargets(op.target, what, 'target');
      case 'read':
        return this.#refTargets(op.source, what, 'source');
      case 'copy': {
        const source = this.#refTargets(op.source, what, 'source');
        const target = this.#refTargets(op.target, what, 'target');
        if (source !== target) {
          throw new KeelError(
            ErrorCode.INVALID_ARGUMENT,
            `${what}: source ${describeBuffer(op.source.buffer)} is on device '${op.source.buffer.device.info.name}' and target ${describeBuffer(op.target.buffer)} on device '${op.target.buffer.device.info.name}'; a queue copy stays on one device (use copyAcrossDevices)`,
          );
        }
        return source;
      }
      case 'execute':
        return this.#executeTargets(op.commandBuffers, what);
    }
  }

  #refTargets(ref: DirectBufferRef, what: string, role: string): number {
    if (typeof ref !== 'object' || ref === null) {
      throw new KeelError(ErrorCode.INVALID_ARGUMENT, `${what}: ${role} is not a buffer reference`);
    }
    return this.#bufferTargets(ref.buffer, what, role);
  }

  #bufferTargets(buffer: Buffer, what: string, role: string): number {
    const device = (buffer as Partial<Buffer> | null | undefined)?.device;
    const mask = device === undefined ? undefined : this.#deviceTargets.get(device);
    if (mask === undefined) {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        device === undefined
          ? `${what}: ${role} ${describeValue(buffer)} is not a buffer`
          : `${what}: ${role} ${describeBuffer(buffer)} belongs to device '${device.info.name}', which has no target in this scheduler`,
      );
    }
    return mask;
  }

  #executeTargets(commandBuffers: readonly CommandBuffer[], what: string): number {
    if (!Array.isArray(commandBuffers)) {
      throw new KeelError(ErrorCode.INVALID_ARGUMENT, `${what}: commandBuffers must be an array`);
    }
    let mask = this.allTargets;
    let device: Device | undefined;
    for (let i = 0; i < commandBuffers.length; i++) {
      const cb = commandBuffers[i] as CommandBuffer | undefined;
      const cbDevice = cb?.device;
      const targets = cbDevice === undefined ? undefined : this.#deviceTargets.get(cbDevice);
      if (cb === undefined || cbDevice === undefined || targets === undefined) {
        throw new KeelError(
          ErrorCode.INVALID_ARGUMENT,
          cbDevice === undefined
            ? `${what}: commandBuffers[${i}] is not a command buffer`
            : `${what}: commandBuffers[${i}] belongs to device '${cbDevice.info.name}', which has no target in this scheduler`,
        );
      }
      if (device !== undefined && cbDevice !== device) {
        throw new KeelError(
          ErrorCode.INVALID_ARGUMENT,
          `${what}: commandBuffers[${i}] is on device '${cbDevice.info.name}' but commandBuffers[0] on '${device.info.name}'; one execute runs on one device`,
        );
      }
      device = cbDevice;
      mask = (mask & this.#queueTargets(targets, cb.affinity)) >>> 0;
    }
    return mask;
  }

  /** The targets in `targets` (of one device) whose queue is in the device-level mask `queues`. */
  #queueTargets(targets: number, queues: number): number {
    if (queues >>> 0 === 0xffffffff) return targets;
    let out = 0;
    let m = targets;
    while (m !== 0) {
      const i = 31 - Math.clz32(m & -m);
      m = (m & ~(1 << i)) >>> 0;
      if ((queues & this.#queueBit[i]!) !== 0) out |= 1 << i;
    }
    return out >>> 0;
  }

  /** Why only some targets can run `op` (error messages only). */
  #whyPlaceable(op: QueueOperation): string {
    switch (op.kind) {
      case 'execute':
        return `the targets of the command buffers' device within their affinity`;
      case 'dealloca':
        return `the targets of device '${op.buffer.device.info.name}' that holds the buffer`;
      case 'read':
      case 'copy':
        return `the targets of device '${op.source.buffer.device.info.name}' that holds the source`;
      default:
        return op.kind === 'fill' || op.kind === 'update' || op.kind === 'write'
          ? `the targets of device '${op.target.buffer.device.info.name}' that holds the target`
          : 'every target';
    }
  }

  /** Hands `op` to `device` with the chosen queue's device-level affinity. */
  #forward(
    op: QueueOperation,
    device: Device,
    queue: number,
    wait: Fence,
    signal: Fence,
  ): Buffer | undefined {
    switch (op.kind) {
      case 'alloca':
        return device.queueAlloca(queue, wait, signal, op.params, op.size, op.options);
      case 'dealloca':
        device.queueDealloca(queue, wait, signal, op.buffer);
        return undefined;
      case 'execute':
        device.queueExecute(queue, wait, signal, op.commandBuffers, op.bindingTables);
        return undefined;
      case 'fill':
        device.queueFill(queue, wait, signal, op.target, op.pattern, op.patternLength);
        return undefined;
      case 'update':
        device.queueUpdate(queue, wait, signal, op.source, op.target);
        return undefined;
      case 'copy':
        device.queueCopy(queue, wait, signal, op.source, op.target);
        return undefined;
      case 'read':
        device.queueRead(queue, wait, signal, op.source, op.target);
        return undefined;
      case 'write':
        device.queueWrite(queue, wait, signal, op.source, op.target);
        return undefined;
      case 'barrier':
        device.queueBarrier(queue, wait, signal);
        return undefined;
      case 'host-call':
        device.queueHostCall(queue, wait, signal, op.callback);
        return undefined;
    }
  }
}

/** How messages name the submission of `op`; INVALID_ARGUMENT unless it is a queue operation. */
function whatOf(op: QueueOperation): string {
  if (typeof op !== 'object' || op === null || typeof op.kind !== 'string' || !Object.hasOwn(WHAT, op.kind)) {
    throw new KeelError(
      ErrorCode.INVALID_ARGUMENT,
      `Scheduler.submit: ${describeOp(op)} is not a queue operation (kind one of ${Object.keys(WHAT).join(', ')})`,
    );
  }
  return WHAT[op.kind];
}

function describeOp(op: unknown): string {
  if (typeof op !== 'object' || op === null) return describeValue(op);
  const kind = (op as { kind?: unknown }).kind;
  return `an object of kind ${typeof kind === 'string' ? `'${kind}'` : describeValue(kind)}`;
}
