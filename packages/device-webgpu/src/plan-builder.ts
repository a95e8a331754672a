/**
 * Builds a ReplayPlan from any hal CommandBuffer through its `replayStructure`, which hands over every
 * ref as recorded: a direct buffer, or a slot index with its slot-relative range. O(commands), once per
 * command buffer and device (`devicePlan`); submissions then only resolve their table.
 */
import type { Buffer, CommandBindings, CommandBuffer, Device, Executable, StructureRef } from '@keel/hal';
import { type DispatchArgs, invalid, PlanSink, REF_STRIDE, TypedArrayBuilder } from '@keel/hal/driver';
import type { BindingLayout } from './binding-layouts';
import { alignUp } from './gpu-memory';
import {
  OP_BEGIN_DEBUG_GROUP,
  OP_COPY,
  OP_DISPATCH,
  OP_DISPATCH_INDIRECT,
  OP_END_DEBUG_GROUP,
  OP_FILL,
  OP_UPDATE,
} from './plan-format';
import { type PlanData, ReplayPlan } from './replay-plan';
import { WebGpuBuffer } from './webgpu-buffer';
import { type CompiledExport, WebGpuExecutable } from './webgpu-executable';

/** `buffer` as a buffer of `device` (INVALID_ARGUMENT naming the command buffer and `what` otherwise). */
function acceptBuffer(device: Device, name: string, buffer: Buffer, what: string): WebGpuBuffer {
  if (!(buffer instanceof WebGpuBuffer) || buffer.device !== device) {
    throw invalid(`${name}: ${what}: the buffer is not a buffer of this webgpu device`);
  }
  return buffer;
}

/** The sink that turns replayed commands into plan arrays. */
class PlanBuilder extends PlanSink<WebGpuBuffer> {
  readonly #device: Device;
  readonly #name: string;
  readonly #uniformAlignment: number;

  readonly #ops = new TypedArrayBuilder('Int32');
  readonly #exports: CompiledExport[] = [];
  readonly #exportIndex = new Map<CompiledExport, number>();
  readonly #labels: string[] = [];
  readonly #payloads: Uint8Array[] = [];
  readonly #setLayouts: BindingLayout[] = [];
  readonly #setFirstRef = new TypedArrayBuilder('Int32');
  readonly #setCount = new TypedArrayBuilder('Int32');
  readonly #setUsesSlots = new TypedArrayBuilder('Int32');
  readonly #setExports = new TypedArrayBuilder('Int32');
  readonly #setIndex = new Map<string, number>();
  readonly #constantsIndex = new Map<string, number>();
  /** The de-duplicated constants block (u32 values). */
  readonly #block: number[] = [];
  #opCount = 0;

  constructor(device: Device, name: string, uniformAlignment: number) {
    super((buffer, what) => acceptBuffer(device, name, buffer, what));
    this.#device = device;
    this.#name = name;
    this.#uniformAlignment = uniformAlignment;
  }

  /** Appends one op record (OP_STRIDE fields; fields an op does not use are 0). */
  #op(op: number, a = 0, b = 0, c = 0, d = 0, e = 0, f = 0): void {
    const ops = this.#ops;
    ops.push(op);
    ops.push(a);
    ops.push(b);
    ops.push(c);
    ops.push(d);
    ops.push(e);
    ops.push(f);
    this.#opCount++;
  }

  #export(executable: Executable, entry: number): number {
    if (!(executable instanceof WebGpuExecutable) || executable.device !== this.#device) {
      throw invalid(`${this.#name}: dispatch: the executable is not an executable of this webgpu device`);
    }
    const compiled = executable.compiled[entry];
    if (compiled === undefined) throw invalid(`${this.#name}: dispatch: no export #${entry}`);
    let index = this.#exportIndex.get(compiled);
    if (index === undefined) {
      index = this.#exports.length;
      this.#exports.push(compiled);
      this.#exportIndex.set(compiled, index);
    }
    return index;
  }

  /** The binding set of a dispatch (de-duplicated by layout and refs). */
  #set(e: number, compiled: CompiledExport, bindings: CommandBindings<StructureRef>): number {
    const refs = this.refs;
    const firstRef = refs.count;
    let usesSlots = false;
    let signature = `${compiled.bindings.id}`;
    const count = bindings.count;
    for (let i = 0; i < count; i++) {
      refs.push(
        bindings.buffers[i] as StructureRef,
        bindings.offsets[i] as number,
        bindings.lengths[i] as number,
        `binding ${i}`,
      );
      usesSlots ||= refs.lastUsesSlot;
      const at = (firstRef + i) * REF_STRIDE;
      const r = refs.values.array;
      signature += `|${r[at]},${r[at + 1]},${r[at + 2]}`;
    }
    const existing = this.#setIndex.get(signature);
    if (existing !== undefined) {
      refs.truncate(firstRef);
      return existing;
    }
    const set = this.#setLayouts.length;
    this.#setLayouts.push(compiled.bindings);
    this.#setFirstRef.push(firstRef);
    this.#setCount.push(count);
    this.#setUsesSlots.push(usesSlots ? 1 : 0);
    this.#setExports.push(e);
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
    const offset = alignUp(this.#block.length * 4, this.#uniformAlignment);
    while (this.#block.length * 4 < offset) this.#block.push(0);
    for (let i = 0; i < n; i++) this.#block.push(constants[i] ?? 0);
    this.#constantsIndex.set(key, offset);
    return offset;
  }

  protected onFill(ref: number, pattern: number, patternLength: 1 | 2 | 4): void {
    this.#op(OP_FILL, ref, pattern | 0, patternLength);
  }

  protected onUpdate(source: Uint8Array, ref: number, length: number): void {
    this.#payloads.push(source.slice(0, length));
    this.#op(OP_UPDATE, ref, this.#payloads.length - 1);
  }

  protected onCopy(source: number, target: number): void {
    this.#op(OP_COPY, source, target);
  }

  protected onDispatch(d: DispatchArgs): void {
    const e = this.#export(d.executable, d.entry);
    const compiled = this.#exports[e] as CompiledExport;
    const set = this.#set(e, compiled, d.bindings);
    if (d.params === undefined) {
      this.#op(OP_DISPATCH, e, d.x, d.y, d.z, set, this.#constants(compiled, d.constants));
    } else {
      const paramsRef = this.refs.push(d.params, d.paramsOffset, 12, 'indirect parameters');
      this.#op(OP_DISPATCH_INDIRECT, e, paramsRef, 0, 0, set, this.#constants(compiled, d.constants));
    }
  }

  // barrier: WebGPU orders the commands of a queue, every command sees the results of the ones before it.

  override beginDebugGroup(label: string): void {
    this.#labels.push(label);
    this.#op(OP_BEGIN_DEBUG_GROUP, this.#labels.length - 1);
  }

  override endDebugGroup(): void {
    this.#op(OP_END_DEBUG_GROUP);
  }

  /** The plan's arrays (after `replayStructure`). */
  data(label: string, reusable: boolean): PlanData {
    return {
      label,
      reusable,
      ops: this.#ops.toArray(),
      opCount: this.#opCount,
      refs: this.refs.values.toArray(),
      buffers: this.refs.buffers,
      exports: this.#exports,
      labels: this.#labels,
      payloads: this.#payloads,
      setLayouts: this.#setLayouts,
      setFirstRef: this.#setFirstRef.toArray(),
      setCount: this.#setCount.toArray(),
      setUsesSlots: Uint8Array.from(this.#setUsesSlots.toArray()),
      setExports: this.#setExports.toArray(),
      constants: Uint32Array.from(this.#block),
      slots: this.refs.usedSlots(),
    };
  }
}

/**
 * A device's plan compiler: the `devicePlan(key, build)` pair its submissions pass to command buffers,
 * and how many plans it built. The plan is built here, below the device, so a submission does not call
 * back into webgpu-device.ts.
 */
export class ReplayPlanner {
  readonly #device: Device;
  readonly #options: PlanOptions;

  /** The key of this device's plans on a command buffer. */
  readonly key = {};
  /** Plans built so far (WebGpuDeviceStats.plansBuilt). */
  built = 0;

  constructor(device: Device, options: PlanOptions) {
    this.#device = device;
    this.#options = options;
  }

  /** Builds the plan of `commandBuffer` (CommandBuffer.devicePlan's builder). */
  readonly build = (commandBuffer: CommandBuffer): ReplayPlan => {
    this.built++;
    const options = this.#options;
    const name =
      commandBuffer.label === undefined ? 'command buffer' : `command buffer '${commandBuffer.label}'`;
    const builder = new PlanBuilder(this.#device, name, options.uniformAlignment);
    commandBuffer.replayStructure(builder);
    const data = builder.data(name, commandBuffer.mode === 'reusable');
    return new ReplayPlan(data, options.tableCacheSize);
  };
}

/** Options of a ReplayPlanner's plans. */
export interface PlanOptions {
  readonly uniformAlignment: number;
  readonly tableCacheSize: number;
}
