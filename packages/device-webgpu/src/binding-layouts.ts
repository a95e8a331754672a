/**
 * Bind group layouts, pipeline layouts and the device-wide bind group cache.
 *
 * Every pipeline of the device uses explicit layouts:
 * - group 0: the export's bindings, binding i ↔ `bindings[i]`, each `storage` (read-write) or `uniform`
 *   (as the WGSL declares it). Storage bindings are always read-write in the layout (read-only
 *   declarations are rewritten, see wgsl-source.ts) because WebGPU forbids binding one GPUBuffer as
 *   read-only and writable in one dispatch, and pooled buffers share GPUBuffers (slabs).
 * - group 1 (only for exports with constants): one uniform binding with a dynamic offset into the
 *   device's uniform ring; the same layout and bind group serve every pipeline.
 *
 * Layouts are interned by their shape, so bind groups are shared by every pipeline of one shape. Each
 * group-0 layout owns an LRU cache of bind groups keyed by (memory id, offset, size) per binding; its
 * lookup allocates nothing.
 */
import { invalid } from '@keel/hal/driver';
import type { ErrorScopes } from './gpu-errors';
import { STAGE_COMPUTE } from './gpu-flags';
import type { GpuMemory } from './gpu-memory';
import { NumericKeyCache } from './numeric-key-cache';

/** 's' for a read-write storage binding, 'u' for a uniform binding. */
export type BindingKind = 's' | 'u';

/** An interned group-0 layout and its bind group cache. */
export class BindingLayout {
  declare readonly cache: NumericKeyCache<GPUBindGroup>;
  /** GPUBuffers of the bindings being looked up (set with `setBinding`). */
  readonly #buffers: (GPUBuffer | undefined)[];
  readonly #kinds: string;
  readonly #scopes: ErrorScopes;

  constructor(
    readonly id: number,
    readonly layout: GPUBindGroupLayout,
    kinds: string,
    cacheSize: number,
    scopes: ErrorScopes,
  ) {
    this.#kinds = kinds;
    this.#scopes = scopes;
    this.cache = new NumericKeyCache<GPUBindGroup>(Math.max(1, 3 * kinds.length), cacheSize);
    this.#buffers = new Array<GPUBuffer | undefined>(kinds.length).fill(undefined);
  }

  /** Number of bindings. */
  get count(): number {
    return this.#kinds.length;
  }

  /** Sets binding `i` of the next `bindGroup` lookup. `size` is a multiple of 4. */
  setBinding(i: number, memory: GpuMemory, offset: number, size: number): void {
    const key = this.cache.key;
    key[3 * i] = memory.id;
    key[3 * i + 1] = offset;
    key[3 * i + 2] = size;
    this.#buffers[i] = memory.buffer;
  }

  /**
   * The bind group of the bindings set with `setBinding` (cached; created on a miss). INVALID_ARGUMENT
   * when two writable bindings overlap in one GPUBuffer (WebGPU forbids that aliasing).
   */
  bindGroup(device: GPUDevice): GPUBindGroup {
    const cached = this.cache.get();
    if (cached !== undefined) return cached;
    const key = this.cache.key;
    const n = this.#kinds.length;
    const entries: GPUBindGroupEntry[] = [];
    for (let i = 0; i < n; i++) {
      const buffer = this.#buffers[i] as GPUBuffer;
      const offset = key[3 * i + 1] as number;
      const size = key[3 * i + 2] as number;
      const limit = this.#kinds[i] === 'u' ? 'maxUniformBufferBindingSize' : 'maxStorageBufferBindingSize';
      const max = device.limits[limit];
      if (size > max)
        this.#fail(`dispatch binding ${i}: ${size} bytes exceed the device's ${limit} of ${max}`);
      for (let j = 0; j < i; j++) {
        if (key[3 * j] !== key[3 * i]) continue;
        const ki = this.#kinds[i];
        const kj = this.#kinds[j];
        if (ki === 'u' && kj === 'u') continue;
        if (ki !== kj) {
          this.#fail(
            `dispatch bindings ${j} and ${i} use one GPU buffer as a uniform and as a storage binding; WebGPU forbids that in one dispatch`,
          );
        }
        const o = key[3 * j + 1] as number;
        const s = key[3 * j + 2] as number;
        if (offset < o + s && o < offset + size) {
          this.#fail(
            `dispatch bindings ${j} and ${i} overlap (bytes [${o}, ${o + s}) and [${offset}, ${offset + size}) of one GPU buffer); WebGPU forbids aliasing writable storage bindings`,
          );
        }
      }
      entries.push({ binding: i, resource: { buffer, offset, size } });
    }
    this.#scopes.enter();
    const group = device.createBindGroup({ layout: this.layout, entries });
    this.cache.set(group);
    this.#buffers.fill(undefined);
    return group;
  }

  /** INVALID_ARGUMENT (`message` names the bindings and the rule), after dropping the lookup's buffers. */
  #fail(message: string): never {
    this.#buffers.fill(undefined);
    throw invalid(message);
  }
}

/** Interns layouts of one GPUDevice. */
export class BindingLayouts {
  /** Group 1: the constants window of the uniform ring (dynamic offset). */
  declare readonly constants: GPUBindGroupLayout;
  readonly #device: GPUDevice;
  readonly #cacheSize: number;
  /** The device's error scopes (a bind group created while an operation encodes is inside them). */
  readonly scopes: ErrorScopes;
  readonly #layouts = new Map<string, BindingLayout>();
  readonly #pipelineLayouts = new Map<string, GPUPipelineLayout>();

  constructor(device: GPUDevice, cacheSize: number, scopes: ErrorScopes) {
    this.#device = device;
    this.#cacheSize = cacheSize;
    this.scopes = scopes;
    this.constants = device.createBindGroupLayout({
      label: 'keel constants',
      entries: [
        {
          binding: 0,
          visibility: STAGE_COMPUTE,
          buffer: { type: 'uniform', hasDynamicOffset: true, minBindingSize: 0 },
        },
      ],
    });
  }

  /** The interned group-0 layout for bindings of these kinds ("ssu": storage, storage, uniform). */
  bindings(kinds: string): BindingLayout {
    let layout = this.#layouts.get(kinds);
    if (layout === undefined) {
      const entries: GPUBindGroupLayoutEntry[] = [];
      for (let i = 0; i < kinds.length; i++) {
        entries.push({
          binding: i,
          visibility: STAGE_COMPUTE,
          buffer: { type: kinds[i] === 'u' ? 'uniform' : 'storage' },
        });
      }
      const gpuLayout = this.#device.createBindGroupLayout({ label: `keel bindings ${kinds}`, entries });
      layout = new BindingLayout(this.#layouts.size + 1, gpuLayout, kinds, this.#cacheSize, this.scopes);
      this.#layouts.set(kinds, layout);
    }
    return layout;
  }

  /** The pipeline layout [group 0, group 1 if `withConstants`]. */
  pipelineLayout(bindings: BindingLayout, withConstants: boolean): GPUPipelineLayout {
    const key = `${bindings.id}:${withConstants ? 1 : 0}`;
    let layout = this.#pipelineLayouts.get(key);
    if (layout === undefined) {
      layout = this.#device.createPipelineLayout({
        bindGroupLayouts: withConstants ? [bindings.layout, this.constants] : [bindings.layout],
      });
      this.#pipelineLayouts.set(key, layout);
    }
    return layout;
  }

  /** Interned group-0 layouts. */
  get size(): number {
    return this.#layouts.size;
  }

  /** Drops every layout and cached bind group (the device's teardown). */
  destroy(): void {
    for (const layout of this.#layouts.values()) layout.cache.clear();
    this.#layouts.clear();
    this.#pipelineLayouts.clear();
  }

  /** Every interned group-0 layout (for statistics). */
  all(): IterableIterator<BindingLayout> {
    return this.#layouts.values();
  }
}
