/**
 * `listWebGpuAdapters`: the WebGPU adapters this process can open, in the order `createWebGpuDevice`
 * indexes them, and the `createWebGpuDevice` options that open adapter i.
 *
 * How adapters are chosen (Node, the `webgpu` package = Dawn's node bindings, 0.6.x):
 * - `requestAdapter()` enumerates the adapters of the platform's backend (Vulkan on Linux) and returns
 *   the FIRST one; `powerPreference` only sorts them.
 * - `create(['adapter=NAME'])` (Keel: `dawnOptions: ['adapter=NAME']`) returns the first adapter whose
 *   native device name CONTAINS `NAME`; a name no adapter has makes `requestAdapter` reject with the list
 *   of every adapter ("Available adapters: * backend: 'vulkan', name: '...'"), which is how this
 *   function enumerates them (Dawn's node bindings have no other enumeration).
 * - So adapters with distinct names are selectable by index; of several adapters with the SAME name
 *   (two identical GPUs) only the first is reachable in one process: the others are listed with
 *   `selectable: false` (open them from a process whose Vulkan loader shows only that GPU).
 * In browsers there is one adapter, `navigator.gpu.requestAdapter()`'s.
 */
import { describeValue, ErrorCode, KeelError } from '@keel/fence';
import { invalid } from '@keel/hal/driver';
import { navigatorGpu, unavailable } from './acquire-gpu-device';
import { HAS_DAWN, loadDawn } from './platform/dawn';
import type { WebGpuDeviceOptions } from './webgpu-device-options';

/** One adapter as `listWebGpuAdapters` reports it. */
export interface WebGpuAdapterEntry {
  /** Position in the list: what `webgpu:INDEX` names. */
  readonly index: number;
  /** Dawn's backend ('vulkan', 'metal', ...; 'browser' for navigator.gpu's). */
  readonly backend: string;
  /** The adapter's native device name (what Dawn's `adapter=` option matches). */
  readonly name: string;
  /** False when an earlier adapter has the same name: Dawn cannot select this one in this process. */
  readonly selectable: boolean;
}

/** A name no adapter has: asking for it makes Dawn list every adapter. */
const LIST_PROBE = 'adapter=\u0001keel-list-adapters';

/** Parses Dawn's "Available adapters:" list (exported for tests). */
export function parseDawnAdapterList(message: string): WebGpuAdapterEntry[] {
  const entries: WebGpuAdapterEntry[] = [];
  const seen = new Set<string>();
  for (const line of message.split('\n')) {
    const m = /^\s*\*\s*backend:\s*'([^']*)',\s*name:\s*'(.*)'\s*$/.exec(line);
    if (m === null) continue;
    const name = m[2]!;
    entries.push({ index: entries.length, backend: m[1]!, name, selectable: !seen.has(name) });
    seen.add(name);
  }
  return entries;
}

/**
 * The adapters WebGPU offers here (empty when there is no WebGPU). Never throws for a missing WebGPU;
 * rejects with UNAVAILABLE only when Dawn answers in a way this function does not understand.
 */
export async function listWebGpuAdapters(): Promise<WebGpuAdapterEntry[]> {
  const browserGpu = navigatorGpu();
  if (browserGpu !== undefined || !HAS_DAWN) {
    const adapter = await browserGpu?.requestAdapter();
    if (adapter === undefined || adapter === null) return [];
    const name = adapter.info?.description || adapter.info?.device || 'WebGPU adapter';
    return [{ index: 0, backend: 'browser', name, selectable: true }];
  }
  let gpu: GPU;
  try {
    gpu = await loadDawn([LIST_PROBE]);
  } catch {
    return [];
  }
  try {
    const adapter = await gpu.requestAdapter();
    if (adapter === null) return [];
    // A Dawn that ignores the option: only the adapter it gave is known.
    return [{ index: 0, backend: 'unknown', name: adapter.info.device, selectable: true }];
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (/no suitable backends|no adapter/.test(message)) return parseDawnAdapterList(message);
    throw unavailable('listWebGpuAdapters: Dawn did not list its adapters', error);
  }
}

/**
 * The `createWebGpuDevice` options that open adapter `index` of `adapters` (from listWebGpuAdapters):
 * `dawnOptions: ['adapter=NAME']` in Node. OUT_OF_RANGE for an index beyond the list, UNAVAILABLE for
 * an adapter Dawn cannot select (the same name as an earlier one).
 */
export function webGpuAdapterOptions(
  adapters: readonly WebGpuAdapterEntry[],
  index: number,
): Pick<WebGpuDeviceOptions, 'dawnOptions'> {
  if (!Number.isSafeInteger(index) || index < 0) {
    throw invalid(
      `webGpuAdapterOptions: adapter index must be a non-negative integer, got ${describeValue(index)}`,
    );
  }
  const entry = adapters[index];
  if (entry === undefined) {
    throw new KeelError(
      ErrorCode.OUT_OF_RANGE,
      `webGpuAdapterOptions: adapter ${index} does not exist (${adapters.length} WebGPU adapter(s) present)`,
    );
  }
  if (!entry.selectable) {
    throw unavailable(
      `webGpuAdapterOptions: adapter ${index} ('${entry.name}') has the same name as an earlier adapter; Dawn selects adapters by name, so only the first of them can be opened in one process`,
    );
  }
  return entry.backend === 'browser' ? {} : { dawnOptions: [`adapter=${entry.name}`] };
}
