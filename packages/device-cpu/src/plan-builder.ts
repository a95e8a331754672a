/**
 * Builds a plan (plan-format.ts) from any hal CommandBuffer through its `replayStructure`, which hands
 * over every ref as recorded: a direct buffer, or a slot index with its slot-relative range. This costs
 * O(commands) once per command buffer (at its first submission on this device); later submissions
 * reuse the plan and only resolve the table. Slot refs are renumbered densely (the k-th used slot,
 * ascending), so a submission resolves one entry per slot used, never one per slot number.
 */
import type { Buffer, CommandBuffer, Executable } from '@keel/hal';
import { type DispatchArgs, isSlotCode, PlanSink, REF_STRIDE, TypedArrayBuilder } from '@keel/hal/driver';
import { checkWorkgroupCount } from './executor';
import { CMD_STRIDE, Opcode, type PlanArrays } from './plan-format';

/** What a plan holds besides its arrays: the objects its indices name. */
export interface BuiltPlan {
  readonly arrays: PlanArrays;
  /** Direct buffers, in the order of their resolved-table entries. */
  readonly direct: readonly Buffer[];
  /** The binding-table slot of each plan slot (a slot ref's code k names table slot `slots[k]`). */
  readonly slots: Int32Array;
}

/** Maps an executable to the id the device gave it (its index in the device's executable registry). */
export type ExecutableId = (executable: Executable) => number;

/** Allocates the plan's memory: a SharedArrayBuffer in task mode, an ArrayBuffer in sync mode. */
export type PlanMemory = (byteLength: number) => ArrayBufferLike;

/** Replayed commands → plan arrays (refs through the driver kit's PlanSink, one encoding). */
class PlanBuilder extends PlanSink<Buffer> {
  readonly #commands = new TypedArrayBuilder('Int32');
  readonly #bindingRefs = new TypedArrayBuilder('Int32');
  readonly #constants = new TypedArrayBuilder('Uint32');
  readonly #data = new TypedArrayBuilder('Uint8', 256);
  #indirectCount = 0;

  readonly #executableId: ExecutableId;

  constructor(executableId: ExecutableId) {
    // Direct buffers are checked by the device once the plan is built (cpu-device.ts buildPlan).
    super((buffer) => buffer);
    this.#executableId = executableId;
  }

  /**
   * Appends a command: `op`, then its fields in the layout order of plan-format.ts (unused ones 0).
   * Fixed parameters, not a rest array: one-shot command buffers build a plan per submission.
   */
  #command(op: number, f1 = 0, f2 = 0, f3 = 0, f4 = 0, f5 = 0, f6 = 0, f7 = 0, f8 = 0, f9 = 0): void {
    const c = this.#commands;
    c.reserve(CMD_STRIDE);
    const a = c.array;
    const at = c.length;
    a[at] = op;
    a[at + 1] = f1;
    a[at + 2] = f2;
    a[at + 3] = f3;
    a[at + 4] = f4;
    a[at + 5] = f5;
    a[at + 6] = f6;
    a[at + 7] = f7;
    a[at + 8] = f8;
    a[at + 9] = f9;
    c.length = at + CMD_STRIDE;
  }

  protected onFill(ref: number, pattern: number, patternLength: 1 | 2 | 4): void {
    this.#command(Opcode.FILL, ref, pattern | 0, patternLength);
  }

  protected onUpdate(source: Uint8Array, ref: number, length: number): void {
    const start = this.#data.length;
    this.#data.append(source.subarray(0, length));
    this.#command(Opcode.UPDATE, ref, start, length);
  }

  protected onCopy(source: number, target: number): void {
    this.#command(Opcode.COPY, source, target);
  }

  protected onDispatch(d: DispatchArgs): void {
    const { x, y, z, params } = d;
    if (params === undefined) checkWorkgroupCount('cpu device: dispatch', x, y, z);
    const id = this.#executableId(d.executable);
    const constStart = this.#constants.length;
    this.#constants.append(d.constants);
    const bindings = d.bindings;
    const count = bindings.count;
    const b = this.#bindingRefs;
    const bindStart = b.length;
    for (let i = 0; i < count; i++) {
      b.push(this.refs.push(bindings.buffers[i]!, bindings.offsets[i]!, bindings.lengths[i]!, 'binding'));
    }
    // An indirect dispatch: its params ref (made after the bindings' refs) and its scratch index.
    const direct = params === undefined;
    this.#command(
      direct ? Opcode.DISPATCH : Opcode.DISPATCH_INDIRECT,
      id,
      d.entry,
      direct ? x : this.refs.push(params, d.paramsOffset, 12, 'indirect parameters'),
      direct ? y : this.#indirectCount++,
      direct ? z : 0,
      constStart,
      d.constants.length,
      bindStart,
      count,
    );
  }

  override barrier(): void {
    this.#command(Opcode.BARRIER);
  }

  /**
   * Renumbers slot refs densely: code k ≥ 0 becomes the plan's k-th used slot (`slots[k]`, ascending),
   * so that the resolved table has one entry per slot used, whatever the slot numbers (up to 2^31 - 2).
   */
  #denseSlots(): Int32Array {
    const refTable = this.refs;
    const slots = refTable.usedSlots();
    const dense = new Map<number, number>();
    for (let k = 0; k < slots.length; k++) dense.set(slots[k]!, k);
    const values = refTable.values.array;
    for (let at = 0; at < refTable.values.length; at += REF_STRIDE) {
      const code = values[at]!;
      if (isSlotCode(code)) values[at] = dense.get(code)!;
    }
    return slots;
  }

  /** Lays the arrays out in one block of `memory` (8-byte aligned sections). */
  finish(memory: PlanMemory): BuiltPlan {
    const refTable = this.refs;
    const slots = this.#denseSlots();
    const sections = [refTable.values, this.#commands, this.#bindingRefs, this.#constants, this.#data];
    const offsets: number[] = [];
    let total = 0;
    for (const s of sections) {
      offsets.push(total);
      total = (total + s.length * s.array.BYTES_PER_ELEMENT + 7) & ~7;
    }
    const buffer = memory(Math.max(8, total));
    const [refs, commands, bindingRefs, constants, data] = sections.map((s, i) => {
      const View = s.array.constructor as new (b: ArrayBufferLike, o: number, n: number) => typeof s.array;
      const view = new View(buffer, offsets[i]!, s.length);
      view.set(s.array.subarray(0, s.length));
      return view;
    }) as [Float64Array, Int32Array, Int32Array, Uint32Array, Uint8Array];
    return {
      arrays: {
        commandCount: this.#commands.length / CMD_STRIDE,
        slotCount: slots.length,
        directCount: refTable.buffers.length,
        indirectCount: this.#indirectCount,
        commands,
        refs,
        bindingRefs,
        constants,
        data,
      },
      direct: refTable.buffers,
      slots,
    };
  }
}

/**
 * Replays the structure of `commandBuffer` into a new plan. Throws what replayStructure throws, and OUT_OF_RANGE for a dispatch
 * larger than the device runs.
 */
export function buildPlan(
  commandBuffer: CommandBuffer,
  executableId: ExecutableId,
  memory: PlanMemory,
): BuiltPlan {
  const builder = new PlanBuilder(executableId);
  commandBuffer.replayStructure(builder);
  return builder.finish(memory);
}
