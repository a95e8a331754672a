/**
 * Builds a plan (plan-format.ts) from any hal CommandBuffer through its `replayStructure`, which hands
 * over every ref as recorded: a direct buffer, or a slot index with its slot-relative range. This costs
 * O(commands) once per command buffer (at its first submission on this device); later submissions
 * reuse the plan and only resolve the table.
 */
import { type Buffer, type CommandBuffer, ErrorCode, type Executable, KeelError } from '@keel/hal';
import { type DispatchArgs, PlanSink, TypedArrayBuilder } from '@keel/hal/driver';
import { CMD_STRIDE, Field, MAX_DISPATCH_ITEMS, Opcode, type PlanArrays } from './plan-format';

/** What a plan holds besides its arrays: the objects its indices name. */
export interface BuiltPlan {
  readonly arrays: PlanArrays;
  /** Direct buffers, in the order of their resolved-table entries. */
  readonly directBuffers: readonly Buffer[];
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
  #commandCount = 0;

  readonly #executableId: ExecutableId;
  readonly #maxWorkgroupCount: number;

  constructor(executableId: ExecutableId, maxWorkgroupCount: number) {
    // Direct buffers are checked by the device once the plan is built (cpu-device.ts buildPlan).
    super((buffer) => buffer);
    this.#executableId = executableId;
    this.#maxWorkgroupCount = maxWorkgroupCount;
  }

  #command(op: number): number {
    const c = this.#commands;
    c.reserve(CMD_STRIDE);
    const at = c.length;
    c.array.fill(0, at, at + CMD_STRIDE);
    c.array[at] = op;
    c.length = at + CMD_STRIDE;
    this.#commandCount++;
    return at;
  }

  protected onFill(ref: number, pattern: number, patternLength: 1 | 2 | 4): void {
    const at = this.#command(Opcode.FILL);
    const a = this.#commands.array;
    a[at + Field.REF] = ref;
    a[at + Field.PATTERN] = pattern | 0;
    a[at + Field.PATTERN_LENGTH] = patternLength;
  }

  protected onUpdate(source: Uint8Array, ref: number, length: number): void {
    const start = this.#data.length;
    this.#data.append(source.subarray(0, length));
    const at = this.#command(Opcode.UPDATE);
    const a = this.#commands.array;
    a[at + Field.REF] = ref;
    a[at + Field.DATA_START] = start;
    a[at + Field.DATA_LENGTH] = length;
  }

  protected onCopy(source: number, target: number): void {
    const at = this.#command(Opcode.COPY);
    const a = this.#commands.array;
    a[at + Field.SOURCE] = source;
    a[at + Field.TARGET] = target;
  }

  protected onDispatch(d: DispatchArgs): void {
    const { x, y, z } = d;
    const max = this.#maxWorkgroupCount;
    if (d.params === undefined && !(x <= max && y <= max && z <= max && x * y * z <= MAX_DISPATCH_ITEMS)) {
      throw new KeelError(
        ErrorCode.OUT_OF_RANGE,
        `cpu device: dispatch of [${x}, ${y}, ${z}] workgroups exceeds ${max} per dimension or ${MAX_DISPATCH_ITEMS} in all`,
      );
    }
    const id = this.#executableId(d.executable);
    const constStart = this.#constants.length;
    const n = d.constants.length;
    this.#constants.append(d.constants);
    const bindings = d.bindings;
    const count = bindings.count;
    const b = this.#bindingRefs;
    b.reserve(count);
    const bindStart = b.length;
    for (let i = 0; i < count; i++) {
      b.array[bindStart + i] = this.refs.push(
        bindings.buffers[i]!,
        bindings.offsets[i]!,
        bindings.lengths[i]!,
        'binding',
      );
    }
    b.length = bindStart + count;
    const at = this.#command(d.params === undefined ? Opcode.DISPATCH : Opcode.DISPATCH_INDIRECT);
    const a = this.#commands.array;
    a[at + Field.EXECUTABLE] = id;
    a[at + Field.ENTRY] = d.entry;
    a[at + Field.CONST_START] = constStart;
    a[at + Field.CONST_COUNT] = n;
    a[at + Field.BIND_START] = bindStart;
    a[at + Field.BIND_COUNT] = count;
    if (d.params === undefined) {
      a[at + Field.X] = x;
      a[at + Field.Y] = y;
      a[at + Field.Z] = z;
    } else {
      // The params ref is made after the bindings' refs; its index goes in the command.
      a[at + Field.PARAMS_REF] = this.refs.push(d.params, d.paramsOffset, 12, 'indirect parameters');
      a[at + Field.INDIRECT_INDEX] = this.#indirectCount++;
    }
  }

  override barrier(): void {
    this.#command(Opcode.BARRIER);
  }

  /** Lays the arrays out in one block of `memory` (8-byte aligned sections). */
  finish(memory: PlanMemory): BuiltPlan {
    const commandBytes = this.#commands.length * 4;
    const refTable = this.refs;
    const refBytes = refTable.values.length * 8;
    const bindBytes = this.#bindingRefs.length * 4;
    const constBytes = this.#constants.length * 4;
    const dataBytes = this.#data.length;
    const align = (n: number) => (n + 7) & ~7;
    const oRefs = 0;
    const oCommands = align(oRefs + refBytes);
    const oBind = align(oCommands + commandBytes);
    const oConst = align(oBind + bindBytes);
    const oData = align(oConst + constBytes);
    const total = Math.max(8, align(oData + dataBytes));
    const buffer = memory(total);
    const refs = new Float64Array(buffer, oRefs, refTable.values.length);
    refs.set(refTable.values.array.subarray(0, refTable.values.length));
    const commands = new Int32Array(buffer, oCommands, this.#commands.length);
    commands.set(this.#commands.array.subarray(0, this.#commands.length));
    const bindingRefs = new Int32Array(buffer, oBind, this.#bindingRefs.length);
    bindingRefs.set(this.#bindingRefs.array.subarray(0, this.#bindingRefs.length));
    const constants = new Uint32Array(buffer, oConst, this.#constants.length);
    constants.set(this.#constants.array.subarray(0, this.#constants.length));
    const data = new Uint8Array(buffer, oData, dataBytes);
    data.set(this.#data.array.subarray(0, dataBytes));
    return {
      arrays: {
        commandCount: this.#commandCount,
        slotCount: refTable.slotCount,
        directCount: refTable.buffers.length,
        indirectCount: this.#indirectCount,
        commands,
        refs,
        bindingRefs,
        constants,
        data,
      },
      directBuffers: refTable.buffers,
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
  maxWorkgroupCount: number,
  memory: PlanMemory,
): BuiltPlan {
  const builder = new PlanBuilder(executableId, maxWorkgroupCount);
  commandBuffer.replayStructure(builder);
  return builder.finish(memory);
}
