/**
 * The device list of a data-parallel run (`keel demo --devices LIST`, `trainMlpDataParallel({ devices })`):
 * parsing, validation and opening.
 *
 * Grammar: comma-separated entries, each one or more devices:
 * - `cpu` (one CPU device) or `cpu:N` (N CPU devices, 1 ≤ N ≤ 8; all share the host's cores);
 * - `webgpu` (= `webgpu:0`), `webgpu:I` (one Dawn device on WebGPU adapter I, as `keel info` lists
 *   them), `webgpu:IxN` (N Dawn devices on adapter I: several devices may share one GPU).
 * Rules (KeelError naming the option and the rule): an empty list or entry, an unknown kind, a malformed
 * index or count → INVALID_ARGUMENT; the same device named by two entries (`cpu,cpu`, `webgpu,webgpu:0`)
 * → INVALID_ARGUMENT (write `cpu:2` or `webgpu:0x2`: a repeat is more often a typo than a wish); more
 * than MAX_DATA_PARALLEL_DEVICES devices → OUT_OF_RANGE; an adapter index beyond the adapters present
 * → OUT_OF_RANGE (`checkDeviceAdapters`, also run when the devices are opened); a global batch with
 * fewer rows than devices → INVALID_ARGUMENT (`checkBatchCoversDevices`).
 *
 * Caller devices (`checkCallerDevices`, before anything opens): each a Keel device (its `info`, `lost`
 * and the methods the run calls, else INVALID_ARGUMENT naming the entry), distinct, with 2+ queues
 * (INVALID_ARGUMENT), not lost or destroyed (FAILED_PRECONDITION naming the entry, the loss its cause).
 */
import { createCpuDevice } from '@keel/device-cpu';
import {
  createWebGpuDevice,
  listWebGpuAdapters,
  type WebGpuAdapterEntry,
  webGpuAdapterOptions,
} from '@keel/device-webgpu';
import { describeValue, ErrorCode, KeelError } from '@keel/fence';
import type { Device } from '@keel/hal';
import { hardwareConcurrency } from '../platform/cores';
import { TRAIN_QUEUES } from '../train/open-device';
import { isDeviceLike } from '../train/train-options';

/** Most devices one data-parallel run takes. */
export const MAX_DATA_PARALLEL_DEVICES = 8;

/** One device of a data-parallel run. */
export interface DeviceEntry {
  readonly kind: 'cpu' | 'webgpu';
  /** WebGPU: the adapter index. */
  readonly adapter?: number;
  /** A name for progress, traces and results: `cpu:0`, `webgpu:0`, `webgpu:0#1` (second on adapter 0). */
  readonly label: string;
}

function invalid(what: string, message: string): KeelError {
  return new KeelError(ErrorCode.INVALID_ARGUMENT, `${what}: ${message}`);
}

const DIGITS = /^(0|[1-9][0-9]*)$/;

/** Parses a device list; `what` names the option in messages (`--devices`, `trainMlpDataParallel: devices`). */
export function parseDeviceList(spec: unknown, what = 'devices'): DeviceEntry[] {
  if (typeof spec !== 'string' || spec.trim() === '') {
    throw invalid(
      what,
      `must be a comma-separated list of devices such as 'cpu:2' or 'cpu,webgpu', got ${describeValue(spec)}`,
    );
  }
  const entries: DeviceEntry[] = [];
  const named = new Set<string>();
  let cpus = 0;
  for (const raw of spec.split(',')) {
    const item = raw.trim();
    if (item === '')
      throw invalid(what, `an entry of '${spec}' is empty (entries are separated by one comma)`);
    const colon = item.indexOf(':');
    const kind = colon < 0 ? item : item.slice(0, colon);
    const arg = colon < 0 ? undefined : item.slice(colon + 1);
    if (kind === 'cpu') {
      if (arg !== undefined && (!DIGITS.test(arg) || Number(arg) < 1)) {
        throw invalid(
          what,
          `'${item}': the count after 'cpu:' must be a positive integer (cpu:2 = two CPU devices)`,
        );
      }
      if (named.has('cpu')) {
        throw invalid(what, `'${item}': the CPU is named twice; write one 'cpu:N' entry for N CPU devices`);
      }
      named.add('cpu');
      const n = arg === undefined ? 1 : Number(arg);
      for (let i = 0; i < n && entries.length <= MAX_DATA_PARALLEL_DEVICES; i++) {
        entries.push({ kind: 'cpu', label: `cpu:${cpus++}` });
      }
    } else if (kind === 'webgpu') {
      const m = arg === undefined ? ['0', '0', undefined] : /^([^x]*)(?:x(.*))?$/.exec(arg);
      const index = m?.[1] ?? '';
      const count = m?.[2];
      if (!DIGITS.test(index)) {
        throw invalid(
          what,
          `'${item}': the adapter index after 'webgpu:' must be a non-negative integer (see keel info)`,
        );
      }
      if (count !== undefined && (!DIGITS.test(count) || Number(count) < 1)) {
        throw invalid(
          what,
          `'${item}': the count after 'x' must be a positive integer (webgpu:0x2 = two devices on adapter 0)`,
        );
      }
      const key = `webgpu:${Number(index)}`;
      if (named.has(key)) {
        throw invalid(
          what,
          `'${item}': adapter ${Number(index)} is named twice; write one '${key}xN' entry for N devices on it`,
        );
      }
      named.add(key);
      const n = count === undefined ? 1 : Number(count);
      for (let i = 0; i < n && entries.length <= MAX_DATA_PARALLEL_DEVICES; i++) {
        entries.push({ kind: 'webgpu', adapter: Number(index), label: i === 0 ? key : `${key}#${i}` });
      }
    } else {
      throw invalid(what, `'${item}' names an unknown device kind '${kind}' (there are 'cpu' and 'webgpu')`);
    }
    if (entries.length > MAX_DATA_PARALLEL_DEVICES) {
      throw new KeelError(
        ErrorCode.OUT_OF_RANGE,
        `${what}: '${spec}' names more than ${MAX_DATA_PARALLEL_DEVICES} devices (the most one run takes)`,
      );
    }
  }
  return entries;
}

/** Options of openDeviceList. */
export interface OpenDeviceListOptions {
  /** Worker threads per queue of each CPU device (default: the cores shared among the CPU devices). */
  readonly workers?: number;
  /** Names the option in messages. */
  readonly what?: string;
}

/**
 * Checks `batch` rows can give each of `devices` devices at least one row (INVALID_ARGUMENT naming
 * `what`: `trainMlpDataParallel: batch`, `--batch`).
 */
export function checkBatchCoversDevices(batch: number, devices: number, what = 'batch'): void {
  if (batch < devices) {
    throw new KeelError(
      ErrorCode.INVALID_ARGUMENT,
      `${what} (${batch}) must give each of the ${devices} devices at least one row`,
    );
  }
}

/**
 * Checks the WebGPU adapter indices of `entries` against the adapters present (OUT_OF_RANGE naming
 * `what` and the entry) and returns the adapters (none listed when no entry is WebGPU).
 */
export async function checkDeviceAdapters(
  entries: readonly DeviceEntry[],
  what = 'devices',
): Promise<WebGpuAdapterEntry[]> {
  const adapters = entries.some((e) => e.kind === 'webgpu') ? await listWebGpuAdapters() : [];
  for (const e of entries) {
    if (e.kind === 'webgpu' && e.adapter! >= adapters.length) {
      throw new KeelError(
        ErrorCode.OUT_OF_RANGE,
        `${what}: '${e.label}' names WebGPU adapter ${e.adapter}, but ${adapters.length} adapter(s) are present${
          adapters.length > 0 ? ` (webgpu:0..webgpu:${adapters.length - 1}; see keel info)` : ''
        }`,
      );
    }
  }
  return adapters;
}

/** Device methods a data-parallel run calls beyond those trainMlp checks (the scheduler's host calls). */
const DATA_PARALLEL_METHODS = ['createSemaphore', 'queueHostCall', 'queueBarrier'] as const;

/**
 * Checks caller devices before anything opens (see the file comment); `what` names the option
 * (`trainMlpDataParallel: devices`).
 */
export function checkCallerDevices(devices: readonly unknown[], what: string): asserts devices is Device[] {
  if (devices.length === 0) throw new KeelError(ErrorCode.INVALID_ARGUMENT, `${what}: the array is empty`);
  devices.forEach((d, i) => {
    if (!isDeviceLike(d, DATA_PARALLEL_METHODS)) {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `${what}: entry ${i} is not a Keel device (it needs an info, a lost promise and the methods the run calls), got ${describeValue(d)}`,
      );
    }
    if (devices.indexOf(d) !== i) {
      throw new KeelError(ErrorCode.INVALID_ARGUMENT, `${what}: entry ${i} repeats device '${d.info.name}'`);
    }
    if (d.info.queueCount < TRAIN_QUEUES) {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `${what}: device '${d.info.name}' has ${d.info.queueCount} queue(s); each needs ${TRAIN_QUEUES} (compute and upload)`,
      );
    }
    const lost = d.lostReason;
    if (lost !== undefined) {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `${what}: entry ${i} (device '${d.info.name}') is lost or destroyed: ${lost.message}`,
        { cause: lost },
      );
    }
  });
}

/**
 * Opens one Keel device (two queues: compute and upload) per entry. Checks WebGPU adapter indices
 * against the adapters present first (OUT_OF_RANGE naming the entry). On any failure the devices
 * already opened are destroyed before the error propagates.
 */
export async function openDeviceList(
  entries: readonly DeviceEntry[],
  options: OpenDeviceListOptions = {},
): Promise<Device[]> {
  const cpuCount = entries.filter((e) => e.kind === 'cpu').length;
  const adapters = await checkDeviceAdapters(entries, options.what ?? 'devices');
  const workers = options.workers ?? Math.max(1, Math.floor(hardwareConcurrency() / Math.max(1, cpuCount)));
  const devices: Device[] = [];
  try {
    for (const e of entries) {
      if (e.kind === 'cpu') {
        devices.push(
          createCpuDevice({ mode: 'task', queues: TRAIN_QUEUES, workersPerQueue: workers, label: e.label }),
        );
      } else {
        devices.push(
          await createWebGpuDevice({
            ...webGpuAdapterOptions(adapters, e.adapter!),
            queueCount: TRAIN_QUEUES,
            label: e.label,
          }),
        );
      }
    }
  } catch (error) {
    for (const d of devices) await d.destroy().catch(() => {});
    throw error;
  }
  return devices;
}
