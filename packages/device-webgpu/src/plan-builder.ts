/**
 * Builds a ReplayPlan from any hal CommandBuffer through its `replayStructure`, which hands over every
 * ref as recorded: a direct buffer, or a slot index with its slot-relative range. O(commands), once per
 * command buffer and device (`devicePlan`); submissions then only resolve their table.
 */
import {
  type CommandBuffer,
  type Device,
  ErrorCode,
  type Executable,
  KeelError,
  type StructureBindings,
  type StructureRef,
  type StructureSink,
} from '@keel/hal';
import type { BindingLayout } from './binding-layouts';
import { alignUp } from './gpu-memory';
import { PlanOp, REF_STRIDE } from './plan-format';
import { type PlanData, ReplayPlan } from './replay-plan';
import { WebGpuBuffer } from './webgpu-buffer';
import { type CompiledExport, WebGpuExecutable } from './webgpu-executable';

function invalid(message: string): KeelError {
  return new KeelError(ErrorCode.INVALID_ARGUMENT, message);
}

/** Growable typed arrays. */
class Int32List {
  array = new Int32Array(64);
  length = 0;
  push(value: number): void {
    if (this.length === this.array.length) {
      const grown = new Int32Array(this.array.length * 2);
      grown.set(this.array);
      this.array = grown;
    }
    this.array[this.length++] = value;
  }
  toArray(): Int32Array {
    return this.array.slice(0, this.length);
  }
}

class Float64List {
  array = new Float64Array(96);
  length = 0;
  push(value: number): void {
    if (this.length === this.array.length) {
      const grown = new Float64Array(this.array.length * 2);
      grown.set(this.array);
      this.array = grown;
    }
    this.array[this.length++] = value;
  }
  toArray(): Float64Array {
    return this.array.slice(0, this.length);
  }
}

/** The sink that turns replayed commands into plan arrays. */
class PlanBuilder implements StructureSink {
  readonly ops = new Int32List();
  readonly refs = new Float64List();
  readonly buffers: WebGpuBuffer[] = [];
  readonly #bufferIndex = new Map<WebGpuBuffer, number>();
  readonly exports: CompiledExport[] = [];
  readonly #exportIndex = new Map<CompiledExport, number>();
  readonly labels: string[] = [];
  readonly payloads: Uint8Array[] = [];
  readonly setLayouts: BindingLayout[] = [];
  readonly setFirstRef = new Int32List();
  readonly setCount = new Int32List();
  readonly setUsesSlots = new Int32List();
  readonly #setIndex = new Map<string, number>();
  readonly #constantsIndex = new Map<string, number>();
  readonly constants: number[] = [];
  readonly slots = new Set<number>();
  opCount = 0;
  dispatchCount = 0;
  #lastRefUsesSlot = false;

  constructor(
    private readonly device: Device,
    private readonly name: string,
    private readonly uniformAlignment: number,
  ) {}

  /** Appends a ref; returns its index. */
  #ref(buffer: StructureRef, offset: number, length: number, what: string): number {
    const index = this.refs.length / REF_STRIDE;
    if (typeof buffer === 'number') {
      // A slot: its length is concrete or hal's TO_END, which is also the plan's.
      this.slots.add(buffer);
      this.refs.push(-buffer - 1);
      this.refs.push(offset);
      this.refs.push(length);
      this.#lastRefUsesSlot = true;
      return index;
    }
    if (!(buffer instanceof WebGpuBuffer) || buffer.device !== this.device) {
      throw invalid(`${this.name}: ${what}: the buffer is not a buffer of this webgpu device`);
    }
    let b = this.#bufferIndex.get(buffer);
    if (b === undefined) {
      b = this.buffers.length;
      this.buffers.push(buffer);
      this.#bufferIndex.set(buffer, b);
    }
    this.refs.push(b);
    this.refs.push(offset);
    this.refs.push(length);
    this.#lastRefUsesSlot = false;
    return index;
  }

  #op(op: number, a: number, b: number, c: number, d: number, e: number, f: number): void {
    const ops = this.ops;
    ops.push(op);
    ops.push(a);
    ops.push(b);
    ops.push(c);
    ops.push(d);
    ops.push(e);
    ops.push(f);
    this.opCount++;
  }

  #export(executable: Executable, entry: number): number {
    if (!(executable instanceof WebGpuExecutable) || executable.device !== this.device) {
      throw invalid(`${this.name}: dispatch: the executable is not an executable of this webgpu device`);
    }
    const compiled = executable.compiled[entry];
    if (compiled === undefined) throw invalid(`${this.name}: dispatch: no export #${entry}`);
    let index = this.#exportIndex.get(compiled);
    if (index === undefined) {
      index = this.exports.length;
      this.exports.push(compiled);
      this.#exportIndex.set(compiled, index);
    }
    return index;
  }

  /** The binding set of a dispatch (de-duplicated by layout and refs). */
  #set(compiled: CompiledExport, bindings: StructureBindings): number {
    const firstRef = this.refs.length / REF_STRIDE;
    let usesSlots = false;
    let signature = `${compiled.bindings.id}`;
    const count = bindings.count;
    for (let i = 0; i < count; i++) {
      this.#ref(
        bindings.refs[i] as StructureRef,
        bindings.offsets[i] as number,
        bindings.lengths[i] as number,
        `binding ${i}`,
      );
      usesSlots ||= this.#lastRefUsesSlot;
      const at = (firstRef + i) * REF_STRIDE;
      const r = this.refs.array;
      signature += `|${r[at]},${r[at + 1]},${r[at + 2]}`;
    }
    const existing = this.#setIndex.get(signature);
    if (existing !== undefined) {
      this.refs.length = firstRef * REF_STRIDE;
      return existing;
    }
    const set = this.setLayouts.length;
    this.setLayouts.push(compiled.bindings);
    this.setFirstRef.push(firstRef);
    this.setCount.push(count);
    this.setUsesSlots.push(usesSlots ? 1 : 0);
    this.#setIndex.set(signature, set);
    return set;
  }

  /** Byte offset of `constants` in the de-duplicated block, or -1 when the export takes none. */
  #constants(compiled: CompiledExport, constants: Uint32Array): number {
    const n = compiled.constantCount;
    if (n === 0) return -1;
    let key = '';
    for (let i = 0; i < n; i++) key += `${constants[i] ?? 0},`;
    const existing = this.#constantsIndex.get(key);
    if (existing !== undefined) return existing;
    const offset = alignUp(this.constants.length * 4, this.uniformAlignment);
    while (this.constants.length * 4 < offset) this.constants.push(0);
    for (let i = 0; i < n; i++) this.constants.push(constants[i] ?? 0);
    this.#constantsIndex.set(key, offset);
    return offset;
  }

  fill(
    target: StructureRef,
    offset: number,
    length: number,
    pattern: number,
    patternLength: 1 | 2 | 4,
  ): void {
    const ref = this.#ref(target, offset, length, 'fill target');
    this.#op(PlanOp.FILL, ref, pattern | 0, patternLength, 0, 0, 0);
  }

  update(source: Uint8Array, target: StructureRef, offset: number, length: number): void {
    const ref = this.#ref(target, offset, length, 'update target');
    this.payloads.push(source.slice(0, length));
    this.#op(PlanOp.UPDATE, ref, this.payloads.length - 1, 0, 0, 0, 0);
  }

  copy(
    source: StructureRef,
    sourceOffset: number,
    target: StructureRef,
    targetOffset: number,
    length: number,
  ): void {
    const s = this.#ref(source, sourceOffset, length, 'copy source');
    const t = this.#ref(target, targetOffset, length, 'copy target');
    this.#op(PlanOp.COPY, s, t, 0, 0, 0, 0);
  }

  dispatch(
    executable: Executable,
    entry: number,
    x: number,
    y: number,
    z: number,
    constants: Uint32Array,
    bindings: StructureBindings,
  ): void {
    const e = this.#export(executable, entry);
    const compiled = this.exports[e] as CompiledExport;
    const set = this.#set(compiled, bindings);
    this.#op(PlanOp.DISPATCH, e, x, y, z, set, this.#constants(compiled, constants));
    this.dispatchCount++;
  }

  dispatchIndirect(
    executable: Executable,
    entry: number,
    params: StructureRef,
    paramsOffset: number,
    constants: Uint32Array,
    bindings: StructureBindings,
  ): void {
    const e = this.#export(executable, entry);
    const compiled = this.exports[e] as CompiledExport;
    const set = this.#set(compiled, bindings);
    const paramsRef = this.#ref(params, paramsOffset, 12, 'indirect parameters');
    this.#op(PlanOp.DISPATCH_INDIRECT, e, paramsRef, 0, 0, set, this.#constants(compiled, constants));
    this.dispatchCount++;
  }

  barrier(): void {
    // WebGPU orders the commands of a queue: every command sees the results of the ones before it.
  }

  beginDebugGroup(label: string): void {
    this.labels.push(label);
    this.#op(PlanOp.BEGIN_DEBUG_GROUP, this.labels.length - 1, 0, 0, 0, 0, 0);
  }

  endDebugGroup(): void {
    this.#op(PlanOp.END_DEBUG_GROUP, 0, 0, 0, 0, 0, 0);
  }
}

/** Options of `buildReplayPlan`. */
export interface PlanOptions {
  readonly uniformAlignment: number;
  readonly tableCacheSize: number;
}

/** Builds the replay plan of `commandBuffer` for `device`. */
export function buildReplayPlan(
  device: Device,
  commandBuffer: CommandBuffer,
  options: PlanOptions,
): ReplayPlan {
  const name =
    commandBuffer.label === undefined ? 'command buffer' : `command buffer '${commandBuffer.label}'`;
  const builder = new PlanBuilder(device, name, options.uniformAlignment);
  commandBuffer.replayStructure(builder);
  const data: PlanData = {
    label: name,
    reusable: commandBuffer.mode === 'reusable',
    ops: builder.ops.toArray(),
    opCount: builder.opCount,
    refs: builder.refs.toArray(),
    buffers: builder.buffers,
    exports: builder.exports,
    labels: builder.labels,
    payloads: builder.payloads,
    setLayouts: builder.setLayouts,
    setFirstRef: builder.setFirstRef.toArray(),
    setCount: builder.setCount.toArray(),
    setUsesSlots: Uint8Array.from(builder.setUsesSlots.toArray()),
    constants: Uint32Array.from(builder.constants),
    slots: Int32Array.from([...builder.slots].sort((a, b) => a - b)),
    dispatchCount: builder.dispatchCount,
  };
  return new ReplayPlan(data, options.tableCacheSize);
}
