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
 *
 * A uniform binding whose GPUBuffer is also bound as storage by the same dispatch (not the same bytes:
 * two pooled buffers of one slab) binds a Keel-owned detour region instead, refreshed by a copy before
 * each dispatch (uniform-detours.ts). Failures name the dispatch as the caller passes it (`what`).
 */
import { invalid } from '@keel/hal/driver';
import type { ErrorScopes } from './gpu-errors';
import { STAGE_COMPUTE } from './gpu-flags';
import type { GpuMemory } from './gpu-memory';
import { NumericKeyCache } from './numeric-key-cache';
import { UniformDetours } from './uniform-detours';

/** 's' for a read-write storage binding, 'u' for a uniform binding. */
export type BindingKind = 's' | 'u';

/** An interned group-0 layout and its bind group cache. */
export class BindingLayout {
  declare readonly cache: NumericKeyCache<GPUBindGroup>;
  /** GPUBuffers of the bindings being looked up (set with `setBinding`). */
  readonly #buffers: (GPUBuffer | undefined)[];
  readonly #kinds: string;
  readonly #scopes: ErrorScopes;
  readonly #detours: UniformDetours;
  /** The layout has a uniform binding (its bind groups may need detour copies). */
  declare readonly hasUniform: boolean;

  constructor(
    readonly id: number,
    readonly layout: GPUBindGroupLayout,
    kinds: string,
    cacheSize: number,
    scopes: ErrorScopes,
    detours: UniformDetours,
  ) {
    this.#kinds = kinds;
    this.#scopes = scopes;
    this.#detours = detours;
    this.hasUniform = kinds.includes('u');
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
   * The bind group of the bindings set with `setBinding` (cached; created on a miss). `what` names the
   * dispatch for failure messages ("webgpu device '…' queueExecute: command buffer: dispatch of export
   * 'main'"). INVALID_ARGUMENT when a binding exceeds its size limit, when two writable bindings
   * overlap in one GPUBuffer (WebGPU forbids that aliasing), or when a uniform binding overlaps a
   * storage binding (the same bytes read as a uniform and written as storage). A uniform binding
   * that only shares its GPUBuffer with a storage binding (two pooled buffers of one slab, or two
   * ranges of one buffer) binds a detour region instead (uniform-detours.ts), its copy recorded with
   * the bind group.
   */
  bindGroup(device: GPUDevice, what = 'dispatch'): GPUBindGroup {
    const cached = this.cache.get();
    if (cached !== undefined) return cached;
    const key = this.cache.key;
    const kinds = this.#kinds;
    const n = kinds.length;
    let detoured: boolean[] | undefined;
    for (let i = 0; i < n; i++) {
      const offset = key[3 * i + 1] as number;
      const size = key[3 * i + 2] as number;
      const limit = kinds[i] === 'u' ? 'maxUniformBufferBindingSize' : 'maxStorageBufferBindingSize';
      const max = device.limits[limit];
      if (size > max)
        this.#fail(`${what}: binding ${i}: ${size} bytes exceed the device's ${limit} of ${max}`);
      for (let j = 0; j < i; j++) {
        if (key[3 * j] !== key[3 * i]) continue;
        const ki = kinds[i];
        const kj = kinds[j];
        if (ki === 'u' && kj === 'u') continue;
        const o = key[3 * j + 1] as number;
        const s = key[3 * j + 2] as number;
        const overlap = offset < o + s && o < offset + size;
        const ranges = `bytes [${o}, ${o + s}) and [${offset}, ${offset + size}) of one GPU buffer`;
        if (ki === kj) {
          if (overlap) {
            this.#fail(
              `${what}: bindings ${j} and ${i} overlap (${ranges}); WebGPU forbids aliasing writable storage bindings`,
            );
          }
        } else if (overlap) {
          const [u, st] = ki === 'u' ? [i, j] : [j, i];
          this.#fail(
            `${what}: bindings ${j} and ${i} overlap (${ranges}): binding ${u} reads them as a uniform while binding ${st} is writable storage; WebGPU forbids that in one dispatch (bind the uniform's bytes from a range the dispatch does not write)`,
          );
        } else {
          detoured ??= new Array<boolean>(n).fill(false);
          detoured[ki === 'u' ? i : j] = true;
        }
      }
    }
    const entries: GPUBindGroupEntry[] = [];
    let copies:
      | { sources: GPUBuffer[]; sourceOffsets: number[]; targets: GpuMemory[]; sizes: number[] }
      | undefined;
    for (let i = 0; i < n; i++) {
      const buffer = this.#buffers[i] as GPUBuffer;
      const offset = key[3 * i + 1] as number;
      const size = key[3 * i + 2] as number;
      if (detoured?.[i] !== true) {
        entries.push({ binding: i, resource: { buffer, offset, size } });
        continue;
      }
      // The uniform's bytes are copied from here into region i before each dispatch.
      const alignment = device.limits.minUniformBufferOffsetAlignment;
      if (offset % alignment !== 0) {
        this.#fail(
          `${what}: binding ${i}: a uniform binding at byte ${offset} of its GPU buffer, not a multiple of the device's minUniformBufferOffsetAlignment of ${alignment}`,
        );
      }
      const region = this.#detours.region(i, size);
      copies ??= { sources: [], sourceOffsets: [], targets: [], sizes: [] };
      copies.sources.push(buffer);
      copies.sourceOffsets.push(offset);
      copies.targets.push(region);
      copies.sizes.push(size);
      entries.push({ binding: i, resource: { buffer: region.buffer, offset: 0, size } });
    }
    this.#scopes.enter();
    const group = device.createBindGroup({ layout: this.layout, entries });
    if (copies !== undefined) this.#detours.register(group, copies);
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
  /** Detour regions of uniform bindings that share a GPUBuffer with storage (uniform-detours.ts). */
  readonly detours: UniformDetours;

  constructor(device: GPUDevice, cacheSize: number, scopes: ErrorScopes) {
    this.#device = device;
    this.detours = new UniformDetours(device);
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
      layout = new BindingLayout(
        this.#layouts.size + 1,
        gpuLayout,
        kinds,
        this.#cacheSize,
        this.scopes,
        this.detours,
      );
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

  /** Drops every layout and cached bind group, destroys the detour regions (the device's teardown). */
  destroy(): void {
    for (const layout of this.#layouts.values()) layout.cache.clear();
    this.detours.destroy();
    this.#layouts.clear();
    this.#pipelineLayouts.clear();
  }

  /** Every interned group-0 layout (for statistics). */
  all(): IterableIterator<BindingLayout> {
    return this.#layouts.values();
  }
}
