/**
 * A command buffer's replay plan on the WebGPU device (IREE's deferred command buffer, specialised):
 * built once per command buffer (plan-builder.ts), then encoded at every submission.
 *
 * What is resolved once:
 * - pipelines (per export) and bind group layouts;
 * - binding sets: dispatches with the same layout and the same refs share one set; a set of direct refs
 *   only gets its bind group once (at the first encode, when its buffers surely have memory);
 * - constants: de-duplicated into one block; a reusable command buffer's block is uploaded once and
 *   stays resident (resident-constants.ts), a one-shot one's goes through the uniform ring; dispatches
 *   bind it at block offset + their constants' offset;
 * - update payloads: copied at record time (by the command buffer) and kept here.
 *
 * What a binding table changes: the bind groups of sets that name slots. They are cached per plan in an
 * LRU keyed by the table's resolved memory per used slot (memory id, absolute offset, visible length),
 * so a submission with a table seen before (or new table objects over the same memory, as pooled
 * allocations give) finds every bind group with one allocation-free lookup. A miss builds the array,
 * taking each bind group from the device-wide cache (bind groups by memory ranges) before creating one.
 *
 * Encoding checks every buffer reference first (bind groups, then the refs of fills, copies, updates
 * and indirect parameters), so a plan that fails (FAILED_PRECONDITION, INVALID_ARGUMENT) encodes
 * nothing into the submission batch it shares with other operations; `check` does the same without
 * encoding (for the later plans of a multi-plan execute).
 *
 * Encoding walks the ops once: consecutive dispatches share one compute pass; redundant
 * setPipeline/setBindGroup calls are skipped; fills, copies and updates go through the transfer
 * encoder (WebGPU commands or built-in kernels), in command order. A dispatch whose bind group binds a
 * uniform through a detour region (a uniform sharing its GPUBuffer with a storage binding of the same
 * dispatch, uniform-detours.ts) is preceded by the copies into that region, outside the pass.
 */
import { ErrorCode, KeelError } from '@keel/fence';
import type { Binding, BindingTable } from '@keel/hal';
import { invalid } from '@keel/hal/driver';
import type { BindingLayout } from './binding-layouts';
import type { GpuEncoding } from './gpu-encoding';
import type { GpuMemory } from './gpu-memory';
import type { GpuProfiler } from './gpu-profiler';
import type { GpuScratch } from './gpu-scratch';
import type { IndirectValidator } from './indirect-validator';
import { NumericKeyCache } from './numeric-key-cache';
import {
  F_CONSTANTS,
  F_EXPORT,
  F_LABEL,
  F_PARAMS,
  F_PATTERN,
  F_PATTERN_LENGTH,
  F_PAYLOAD,
  F_REF,
  F_SET,
  F_SOURCE,
  F_TARGET,
  F_X,
  F_Y,
  F_Z,
  OP_BEGIN_DEBUG_GROUP,
  OP_COPY,
  OP_DISPATCH,
  OP_DISPATCH_INDIRECT,
  OP_END_DEBUG_GROUP,
  OP_FILL,
  OP_STRIDE,
  OP_UPDATE,
  REF_STRIDE,
} from './plan-format';
import type { ResidentConstants, ResidentPlacement } from './resident-constants';
import type { TransferEncoder } from './transfer-encoder';
import { detourFailure, encodeDetours, type UniformCopies, type UniformDetours } from './uniform-detours';
import type { UniformRing } from './uniform-ring';
import type { WebGpuBuffer } from './webgpu-buffer';
import type { CompiledExport } from './webgpu-executable';

/** What encoding needs from the device (one object per device, reused). */
export interface PlanContext {
  readonly gpu: GPUDevice;
  /** "webgpu device '…' queueExecute": failures of bind groups name the device and operation. */
  readonly what: string;
  readonly encoding: GpuEncoding;
  readonly ring: UniformRing;
  readonly transfer: TransferEncoder;
  readonly scratch: GpuScratch;
  readonly resident: ResidentConstants;
  readonly indirect: IndirectValidator;
  readonly detours: UniformDetours;
  /** Set (by the op runner) only while a traced execute is encoded: dispatches report to it. */
  profiling: GpuProfiler | undefined;
}

/** The arrays a PlanBuilder produces. */
export interface PlanData {
  readonly label: string;
  /** A reusable command buffer's plan keeps its constants resident (uploaded once). */
  readonly reusable: boolean;
  readonly ops: Int32Array;
  readonly opCount: number;
  readonly refs: Float64Array;
  readonly buffers: readonly WebGpuBuffer[];
  readonly exports: readonly CompiledExport[];
  readonly labels: readonly string[];
  readonly payloads: readonly Uint8Array[];
  /** Per binding set: its layout, first ref, binding count, and whether it names a slot. */
  readonly setLayouts: readonly BindingLayout[];
  readonly setFirstRef: Int32Array;
  readonly setCount: Int32Array;
  readonly setUsesSlots: Uint8Array;
  /** Per binding set: the export of the first dispatch that uses it (failure messages name it). */
  readonly setExports: Int32Array;
  /** De-duplicated constants (u32), each vector at a multiple of the uniform offset alignment. */
  readonly constants: Uint32Array;
  /** Binding-table slots the plan uses, ascending. */
  readonly slots: Int32Array;
}

export class ReplayPlan {
  declare readonly data: PlanData;
  /** Bind groups of sets without slots, made at the first encode (undefined before). */
  readonly #fixed: (GPUBindGroup | undefined)[];
  #fixedResolved = false;
  /** Per set: the bind group of the submission being encoded. */
  readonly #bySet: (GPUBindGroup | undefined)[];
  /** Per set: the uniform detour copies its bind group needs before each dispatch (uniform-detours.ts). */
  readonly #copiesBySet: (UniformCopies | undefined)[];
  /** Some set's layout has a uniform binding (only then are detours looked up). */
  readonly #uniforms: boolean;
  /** Per set: index into a table's bind group array, or -1 for a fixed set. */
  readonly #tableIndex: Int32Array;
  readonly #tableSets: number;
  readonly #tables: NumericKeyCache<GPUBindGroup[]> | undefined;

  /** Where the constants live for a reusable plan (placed at the first encode). */
  #resident: ResidentPlacement | undefined;
  /** setBindGroup's dynamic offsets (the allocation-free overload). */
  readonly #dynamicOffsets = new Uint32Array(1);
  /** Refs of the ops other than direct dispatches (fills, copies, updates, indirect parameters). */
  readonly #looseRefs: Int32Array;
  // Scratch of ref resolution (no allocation per ref).
  #memory: GpuMemory | undefined;
  #offset = 0;
  #length = 0;

  constructor(data: PlanData, tableCacheSize: number) {
    this.data = data;
    const sets = data.setLayouts.length;
    this.#fixed = new Array<GPUBindGroup | undefined>(sets).fill(undefined);
    this.#bySet = new Array<GPUBindGroup | undefined>(sets).fill(undefined);
    this.#copiesBySet = new Array<UniformCopies | undefined>(sets).fill(undefined);
    this.#uniforms = data.setLayouts.some((layout) => layout.hasUniform);
    this.#tableIndex = new Int32Array(sets).fill(-1);
    let k = 0;
    for (let s = 0; s < sets; s++) if (data.setUsesSlots[s] === 1) this.#tableIndex[s] = k++;
    this.#tableSets = k;
    const loose: number[] = [];
    const ops = data.ops;
    for (let p = 0; p < data.opCount * OP_STRIDE; p += OP_STRIDE) {
      const op = ops[p];
      if (op === OP_DISPATCH_INDIRECT) loose.push(ops[p + F_PARAMS] as number);
      else if (op === OP_FILL || op === OP_UPDATE) loose.push(ops[p + F_REF] as number);
      else if (op === OP_COPY) loose.push(ops[p + F_SOURCE] as number, ops[p + F_TARGET] as number);
    }
    this.#looseRefs = Int32Array.from(loose);
    this.#tables =
      k > 0
        ? new NumericKeyCache<GPUBindGroup[]>(3 * Math.max(1, data.slots.length), tableCacheSize)
        : undefined;
  }

  /** Slot `slot` of `table`; INVALID_ARGUMENT when the table has no binding there. */
  #binding(table: BindingTable | undefined, slot: number): Binding {
    const binding = table?.[slot];
    if (binding == null) {
      throw invalid(`${this.data.label}: binding slot ${slot}: no binding`);
    }
    return binding;
  }

  /** `buffer`'s memory; FAILED_PRECONDITION when it has none yet (`where` prefixes the buffer's name). */
  #memoryOf(buffer: WebGpuBuffer, where: string): GpuMemory {
    const memory = buffer.memory;
    if (memory === undefined) {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `${this.data.label}:${where} ${buffer.describe()} has no memory yet; order the submission after its queueAlloca's signal`,
      );
    }
    return memory;
  }

  /**
   * Resolves ref `r` into #memory/#offset/#length (absolute offset into the memory). FAILED_PRECONDITION
   * when the buffer has no memory (a queue allocation used before its alloca's signal).
   */
  #resolve(r: number, table: BindingTable | undefined): void {
    const refs = this.data.refs;
    const at = r * REF_STRIDE;
    const code = refs[at] as number;
    const offset = refs[at + 1] as number;
    const length = refs[at + 2] as number;
    let buffer: WebGpuBuffer;
    if (code < 0) {
      buffer = this.data.buffers[-code - 1] as WebGpuBuffer;
      this.#offset = offset;
      this.#length = length;
    } else {
      const binding = this.#binding(table, code);
      buffer = binding.buffer as WebGpuBuffer;
      const base = binding.offset ?? 0;
      this.#offset = base + offset;
      this.#length = length >= 0 ? length : (binding.length ?? buffer.byteLength - base) - offset;
    }
    if (buffer.gpuFailure !== undefined) throw buffer.gpuFailure;
    this.#memory = this.#memoryOf(buffer, '');
    this.#offset += buffer.base;
  }

  /** The bind group of set `s`, built through the device-wide cache. */
  #buildSet(s: number, table: BindingTable | undefined, ctx: PlanContext): GPUBindGroup {
    const data = this.data;
    const layout = data.setLayouts[s] as BindingLayout;
    const first = data.setFirstRef[s] as number;
    const count = data.setCount[s] as number;
    const exp = data.exports[data.setExports[s] as number] as CompiledExport;
    for (let i = 0; i < count; i++) {
      this.#resolve(first + i, table);
      const memory = this.#memory as GpuMemory;
      const offset = this.#offset;
      // The binding covers whole 32-bit words of the caller's range and never a byte past it (as the
      // CPU device's ⌊byteLength / 4⌋-element views): rounding up would expose the next allocation
      // of a slab, or bytes of the caller's buffer outside the range. WebGPU binds no empty range.
      const length = this.#length;
      const size = Math.min(length - (length & 3), memory.size - offset);
      if (size <= 0) {
        this.#memory = undefined;
        throw invalid(
          `${ctx.what}: ${data.label}: dispatch of export '${exp.name}': binding ${i} covers ${length} bytes; WebGPU binds at least one 32-bit word (4 bytes), and a binding never reaches past its range`,
        );
      }
      layout.setBinding(i, memory, offset, size);
    }
    this.#memory = undefined;
    // Only on a miss of the plan's own caches: failures name the device, operation and dispatch.
    return layout.bindGroup(ctx.gpu, `${ctx.what}: ${data.label}: dispatch of export '${exp.name}'`);
  }

  #resolveFixed(ctx: PlanContext): void {
    const sets = this.#fixed.length;
    for (let s = 0; s < sets; s++) {
      if (this.#tableIndex[s] === -1) this.#fixed[s] = this.#buildSet(s, undefined, ctx);
    }
    this.#fixedResolved = true;
  }

  /** The bind groups of the slot-naming sets for `table` (cached by the table's resolved memory). */
  #tableGroups(table: BindingTable | undefined, ctx: PlanContext): GPUBindGroup[] {
    const cache = this.#tables as NumericKeyCache<GPUBindGroup[]>;
    const key = cache.key;
    const slots = this.data.slots;
    for (let k = 0; k < slots.length; k++) {
      const slot = slots[k] as number;
      const binding = this.#binding(table, slot);
      const buffer = binding.buffer as WebGpuBuffer;
      const memory = this.#memoryOf(buffer, ` binding slot ${slot}:`);
      const offset = binding.offset ?? 0;
      key[3 * k] = memory.id;
      key[3 * k + 1] = buffer.base + offset;
      key[3 * k + 2] = binding.length ?? buffer.byteLength - offset;
    }
    const cached = cache.get();
    if (cached !== undefined) return cached;
    // Building touches only the layouts' own cache keys: this cache's key stays intact until `set`.
    const groups = new Array<GPUBindGroup>(this.#tableSets);
    const sets = this.#tableIndex.length;
    for (let s = 0; s < sets; s++) {
      const k = this.#tableIndex[s] as number;
      if (k >= 0) groups[k] = this.#buildSet(s, table, ctx);
    }
    cache.set(groups);
    return groups;
  }

  /** Resolves every loose ref (throws as encoding would), before anything is encoded. */
  #checkLoose(table: BindingTable | undefined): void {
    const loose = this.#looseRefs;
    for (let i = 0; i < loose.length; i++) this.#resolve(loose[i] as number, table);
    this.#memory = undefined;
  }

  /**
   * Throws the KeelError `encode` would throw for `table` (a missing binding, a buffer without memory),
   * encoding nothing; builds and caches the bind groups `encode` will use.
   */
  check(ctx: PlanContext, table: BindingTable | undefined): void {
    this.#bindSets(ctx, table);
    this.#checkLoose(table);
  }

  /**
   * Every set's bind group for `table` into #bySet, and its uniform detour copies into #copiesBySet.
   * A detour region whose creation failed (known once its scopes came back, so possibly after bind
   * groups were cached over it) drops the bind groups cached over it, and the sets are bound again,
   * over a new region; only if that fails too does the submission fail with the failure.
   */
  #bindSets(ctx: PlanContext, table: BindingTable | undefined): void {
    if (this.#bindSetsOnce(ctx, table) === undefined) return;
    const failure = this.#bindSetsOnce(ctx, table);
    if (failure !== undefined) throw failure;
  }

  /** One attempt of #bindSets: undefined, or the failure of a detour region (caches dropped). */
  #bindSetsOnce(ctx: PlanContext, table: BindingTable | undefined): KeelError | undefined {
    if (!this.#fixedResolved) this.#resolveFixed(ctx);
    const groups = this.#tableSets > 0 ? this.#tableGroups(table, ctx) : undefined;
    const fixed = this.#fixed;
    const tableIndex = this.#tableIndex;
    const bySet = this.#bySet;
    for (let s = 0; s < bySet.length; s++) {
      const k = tableIndex[s] as number;
      bySet[s] = k < 0 ? fixed[s] : (groups as GPUBindGroup[])[k];
    }
    if (!this.#uniforms) return undefined;
    const detours = ctx.detours;
    const copiesBySet = this.#copiesBySet;
    const layouts = this.data.setLayouts;
    for (let s = 0; s < bySet.length; s++) {
      const copies = (layouts[s] as BindingLayout).hasUniform
        ? detours.of(bySet[s] as GPUBindGroup)
        : undefined;
      copiesBySet[s] = copies;
      const failure = copies === undefined ? undefined : detourFailure(copies);
      if (failure !== undefined) {
        this.#fixedResolved = false;
        this.#tables?.clear();
        for (const layout of layouts) layout.cache.clear();
        return failure;
      }
    }
    return undefined;
  }

  /**
   * Encodes every command into `ctx.encoding` (which must be begun). Throws a KeelError before
   * encoding anything when a buffer has no memory or a binding is missing.
   */
  encode(ctx: PlanContext, table: BindingTable | undefined): void {
    const data = this.data;
    this.#bindSets(ctx, table);
    if (this.#looseRefs.length > 0) this.#checkLoose(table);
    const encoding = ctx.encoding;
    const ring = ctx.ring;
    let constantsBase = 0;
    let constantsGroup: GPUBindGroup | undefined;
    const constants = data.constants;
    if (constants.length > 0) {
      if (data.reusable) {
        let resident = this.#resident;
        // Placed at the first submission, and again when its slab turned out broken.
        if (resident === undefined || resident.memory.failure !== undefined) {
          resident = this.#resident = ctx.resident.place(this, constants, resident);
        }
        constantsBase = resident.base;
        constantsGroup = resident.group;
      } else {
        constantsBase = ring.reserve(constants.byteLength);
        ring.mirror.set(constants, constantsBase >>> 2);
        constantsGroup = ring.bindGroup;
      }
    }
    const ops = data.ops;
    const end = data.opCount * OP_STRIDE;
    const exports = data.exports;
    // Every set's bind group (and detour copies) for this submission, so a dispatch looks them up once.
    const bySet = this.#bySet;
    const copiesBySet = this.#copiesBySet;
    const transfer = ctx.transfer;
    const profiling = ctx.profiling;
    const dynamicOffsets = this.#dynamicOffsets;
    // Runs of dispatches set state on the pass directly (tracked here, not in `encoding`).
    let pass: GPUComputePassEncoder | undefined;
    let pipeline: GPUComputePipeline | undefined;
    let group0: GPUBindGroup | undefined;
    let constantsOffset = -1;
    for (let p = 0; p < end; p += OP_STRIDE) {
      const op = ops[p];
      if (op === OP_DISPATCH) {
        const x = ops[p + F_X] as number;
        const y = ops[p + F_Y] as number;
        const z = ops[p + F_Z] as number;
        if (x === 0 || y === 0 || z === 0) continue;
        const exp = exports[ops[p + F_EXPORT] as number] as CompiledExport;
        const set = ops[p + F_SET] as number;
        const copies = copiesBySet[set];
        if (copies !== undefined) {
          // The uniform's bytes into its detour region, after every command before (ends the pass).
          encodeDetours(encoding.encoder, copies);
          pass = undefined;
        }
        const timed = profiling === undefined ? undefined : profiling.dispatchPass(encoding, exp);
        if (timed !== undefined || pass === undefined) {
          // A timed dispatch gets a fresh pass of its own; else a run of dispatches starts on the open pass.
          if (timed === undefined) {
            pass = encoding.pass;
            encoding.invalidate();
          } else pass = timed;
          pipeline = undefined;
          group0 = undefined;
          constantsOffset = -1;
        }
        if (exp.pipeline !== pipeline) {
          pipeline = exp.pipeline;
          pass.setPipeline(pipeline);
        }
        const group = bySet[set] as GPUBindGroup;
        if (group !== group0) {
          group0 = group;
          pass.setBindGroup(0, group);
        }
        const c = ops[p + F_CONSTANTS] as number;
        if (c >= 0 && constantsBase + c !== constantsOffset) {
          constantsOffset = constantsBase + c;
          dynamicOffsets[0] = constantsOffset;
          pass.setBindGroup(1, constantsGroup as GPUBindGroup, dynamicOffsets, 0, 1);
        }
        pass.dispatchWorkgroups(x, y, z);
        if (timed !== undefined) {
          encoding.endPass();
          pass = undefined;
        }
        continue;
      }
      // Any other op may end the pass or use `encoding`'s tracking: the next dispatch starts afresh.
      pass = undefined;
      switch (op) {
        case OP_DISPATCH_INDIRECT: {
          const exp = exports[ops[p + F_EXPORT] as number] as CompiledExport;
          const set = ops[p + F_SET] as number;
          const group = bySet[set] as GPUBindGroup;
          const copies = copiesBySet[set];
          if (copies !== undefined) encodeDetours(encoding.encoder, copies);
          this.#resolve(ops[p + F_PARAMS] as number, table);
          // Counts are checked on the device and read from the validator's own buffer, which the
          // dispatch never binds (WebGPU forbids indirect parameters in a writable binding).
          const validated = ctx.indirect.validate(encoding, this.#memory as GpuMemory, this.#offset);
          const timed = profiling === undefined ? undefined : profiling.dispatchPass(encoding, exp);
          const indirect = encoding.bind(exp.pipeline, group);
          const c = ops[p + F_CONSTANTS] as number;
          if (c >= 0) encoding.constants(constantsGroup as GPUBindGroup, constantsBase + c);
          indirect.dispatchWorkgroupsIndirect(validated, 0);
          if (timed !== undefined) encoding.endPass();
          break;
        }
        case OP_FILL: {
          this.#resolve(ops[p + F_REF] as number, table);
          transfer.fill(
            this.#memory as GpuMemory,
            this.#offset,
            this.#length,
            (ops[p + F_PATTERN] as number) >>> 0,
            ops[p + F_PATTERN_LENGTH] as number,
          );
          break;
        }
        case OP_UPDATE: {
          this.#resolve(ops[p + F_REF] as number, table);
          transfer.update(
            data.payloads[ops[p + F_PAYLOAD] as number] as Uint8Array,
            this.#memory as GpuMemory,
            this.#offset,
          );
          break;
        }
        case OP_COPY: {
          this.#resolve(ops[p + F_SOURCE] as number, table);
          const source = this.#memory as GpuMemory;
          const sourceOffset = this.#offset;
          this.#resolve(ops[p + F_TARGET] as number, table);
          transfer.copy(source, sourceOffset, this.#memory as GpuMemory, this.#offset, this.#length);
          break;
        }
        case OP_BEGIN_DEBUG_GROUP:
          encoding.encoder.pushDebugGroup(data.labels[ops[p + F_LABEL] as number] as string);
          break;
        case OP_END_DEBUG_GROUP:
          encoding.encoder.popDebugGroup();
        // PlanBuilder writes no other op.
      }
    }
    this.#memory = undefined;
  }
}
