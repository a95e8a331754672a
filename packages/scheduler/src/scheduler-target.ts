/**
 * Scheduler targets: the (device, queue) pairs a Scheduler places work on. Target i answers to bit i of
 * the scheduler's affinity masks, exactly as queue i answers to bit i of a device's masks.
 */
import { describeValue, ErrorCode, KeelError } from '@keel/fence';
import type { Device } from '@keel/hal';

/** One queue of one device, as the scheduler sees it. */
export interface SchedulerTarget {
  readonly device: Device;
  /** Index of the queue on `device` (below `device.info.queueCount`). */
  readonly queue: number;
  /** A name for traces and error messages; defaults to "<device name> queue <n>". */
  readonly label?: string;
}

/** Most targets one scheduler takes: an affinity mask has 32 bits. */
export const MAX_TARGETS = 32;

/** One target per queue of each device, in the order given (device 0's queues first). */
export function targetsOf(...devices: Device[]): SchedulerTarget[] {
  const targets: SchedulerTarget[] = [];
  for (const device of devices) {
    const count = device.info.queueCount;
    for (let queue = 0; queue < count; queue++) targets.push({ device, queue });
  }
  return targets;
}

/** "target 1 ('cpu' queue 1)": how messages and traces name a target. */
export function describeTarget(index: number, target: SchedulerTarget): string {
  return `target ${index} (${target.label ?? `'${target.device.info.name}' queue ${target.queue}`})`;
}

/**
 * Validates a target list: 1..32 targets, each a device with a queue index below its queue count and
 * an optional string label, no (device, queue) pair twice. Throws INVALID_ARGUMENT naming the target and the rule.
 */
export function checkTargets(targets: readonly SchedulerTarget[]): void {
  if (!Array.isArray(targets) || targets.length === 0 || targets.length > MAX_TARGETS) {
    throw new KeelError(
      ErrorCode.INVALID_ARGUMENT,
      `Scheduler: needs 1..${MAX_TARGETS} targets (one per affinity bit), got ${
        Array.isArray(targets) ? targets.length : describeValue(targets)
      }`,
    );
  }
  const seen = new Map<Device, Set<number>>();
  for (let i = 0; i < targets.length; i++) {
    const target = targets[i];
    const device = target?.device;
    if (
      target === undefined ||
      typeof device !== 'object' ||
      device === null ||
      typeof device.info !== 'object' ||
      typeof device.queueBarrier !== 'function'
    ) {
      throw new KeelError(ErrorCode.INVALID_ARGUMENT, `Scheduler: target ${i} has no device`);
    }
    const count = device.info.queueCount;
    if (!Number.isInteger(target.queue) || target.queue < 0 || target.queue >= count || target.queue > 31) {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `Scheduler: target ${i}: queue ${describeValue(target.queue)} is not a queue of device '${device.info.name}' (${count} queue(s))`,
      );
    }
    let queues = seen.get(device);
    if (queues === undefined) {
      queues = new Set();
      seen.set(device, queues);
    }
    if (queues.has(target.queue)) {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `Scheduler: target ${i}: queue ${target.queue} of device '${device.info.name}' is listed twice`,
      );
    }
    queues.add(target.queue);
    if (target.label !== undefined && typeof target.label !== 'string') {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `Scheduler: target ${i}: label must be a string, got ${describeValue(target.label)}`,
      );
    }
  }
}
