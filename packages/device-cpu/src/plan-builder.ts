/**
 * Builds a plan (plan-format.ts) from any hal CommandBuffer through its `replayStructure`, which hands
 * over every ref as recorded: a direct buffer, or a slot index with its slot-relative range. This costs
 * O(commands) once per command buffer (at its first submission on this device); later submissions
 * reuse the plan and only resolve the table.
 */
import {
  type Buffer,
  type CommandBuffer,
  ErrorCode,
  type Executable,
  KeelError,
  type StructureBindings,
  type StructureRef,
  type StructureSink,
} from '@keel/hal';
import { CMD_STRIDE, Field, MAX_DISPATCH_ITEMS, Opcode, type PlanArrays, REF_STRIDE } from './plan-format';

/** Grows typed arrays by doubling. */
class Int32Builder {
  array = new Int32Array(64);
  length = 0;
  reserve(n: number): void {
    if (this.length + n <= this.array.length) return;
    let size = this.array.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Int32Array(size);
    next.set(this.array.subarray(0, this.length));
    this.array = next;
  }
}

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

class PlanBuilder implements StructureSink {
  private readonly commands = new Int32Builder();
  private refs = new Float64Array(64);
  private refCount = 0;
  private readonly bindingRefs = new Int32Builder();
  private constants = new Uint32Array(64);
  private constantCount = 0;
  private data = new Uint8Array(256);
  private dataLength = 0;
  private slotCount = 0;
  private indirectCount = 0;
  private commandCount = 0;
  readonly directBuffers: Buffer[] = [];
  private readonly directIndex = new Map<Buffer, number>();

  constructor(
    private readonly executableId: ExecutableId,
    private readonly maxWorkgroupCount: number,
  ) {}

  private ref(buffer: StructureRef, offset: number, length: number): number {
    if (this.refCount * REF_STRIDE + REF_STRIDE > this.refs.length) {
      const next = new Float64Array(this.refs.length * 2);
      next.set(this.refs);
      this.refs = next;
    }
    const at = this.refCount * REF_STRIDE;
    if (typeof buffer === 'number') {
      // A slot: its length is concrete or TO_END (-1), which is also the plan's "to the end".
      if (buffer + 1 > this.slotCount) this.slotCount = buffer + 1;
      this.refs[at] = buffer;
      this.refs[at + 1] = offset;
      this.refs[at + 2] = length;
    } else {
      let index = this.directIndex.get(buffer);
      if (index === undefined) {
        index = this.directBuffers.length;
        this.directBuffers.push(buffer);
        this.directIndex.set(buffer, index);
      }
      this.refs[at] = -index - 1;
      this.refs[at + 1] = offset;
      this.refs[at + 2] = length;
    }
    return this.refCount++;
  }

  private command(op: number): number {
    const c = this.commands;
    c.reserve(CMD_STRIDE);
    const at = c.length;
    c.array.fill(0, at, at + CMD_STRIDE);
    c.array[at] = op;
    c.length = at + CMD_STRIDE;
    this.commandCount++;
    return at;
  }

  fill(
    target: StructureRef,
    offset: number,
    length: number,
    pattern: number,
    patternLength: 1 | 2 | 4,
  ): void {
    const ref = this.ref(target, offset, length);
    const at = this.command(Opcode.FILL);
    const a = this.commands.array;
    a[at + Field.REF] = ref;
    a[at + Field.PATTERN] = pattern | 0;
    a[at + Field.PATTERN_LENGTH] = patternLength;
  }

  update(source: Uint8Array, target: StructureRef, offset: number, length: number): void {
    const ref = this.ref(target, offset, length);
    const start = this.dataLength;
    if (start + length > this.data.length) {
      let size = this.data.length * 2;
      while (size < start + length) size *= 2;
      const next = new Uint8Array(size);
      next.set(this.data.subarray(0, start));
      this.data = next;
    }
    this.data.set(source.subarray(0, length), start);
    this.dataLength = start + length;
    const at = this.command(Opcode.UPDATE);
    const a = this.commands.array;
    a[at + Field.REF] = ref;
    a[at + Field.DATA_START] = start;
    a[at + Field.DATA_LENGTH] = length;
  }

  copy(
    source: StructureRef,
    sourceOffset: number,
    target: StructureRef,
    targetOffset: number,
    length: number,
  ): void {
    const s = this.ref(source, sourceOffset, length);
    const t = this.ref(target, targetOffset, length);
    const at = this.command(Opcode.COPY);
    const a = this.commands.array;
    a[at + Field.SOURCE] = s;
    a[at + Field.TARGET] = t;
  }

  private dispatchCommon(
    op: number,
    executable: Executable,
    entry: number,
    constants: Uint32Array,
    bindings: StructureBindings,
  ): number {
    const id = this.executableId(executable);
    const constStart = this.constantCount;
    const n = constants.length;
    if (constStart + n > this.constants.length) {
      let size = this.constants.length * 2;
      while (size < constStart + n) size *= 2;
      const next = new Uint32Array(size);
      next.set(this.constants.subarray(0, constStart));
      this.constants = next;
    }
    this.constants.set(constants, constStart);
    this.constantCount = constStart + n;
    const count = bindings.count;
    const b = this.bindingRefs;
    b.reserve(count);
    const bindStart = b.length;
    for (let i = 0; i < count; i++) {
      b.array[bindStart + i] = this.ref(bindings.refs[i]!, bindings.offsets[i]!, bindings.lengths[i]!);
    }
    b.length = bindStart + count;
    const at = this.command(op);
    const a = this.commands.array;
    a[at + Field.EXECUTABLE] = id;
    a[at + Field.ENTRY] = entry;
    a[at + Field.CONST_START] = constStart;
    a[at + Field.CONST_COUNT] = n;
    a[at + Field.BIND_START] = bindStart;
    a[at + Field.BIND_COUNT] = count;
    return at;
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
    const max = this.maxWorkgroupCount;
    if (!(x <= max && y <= max && z <= max && x * y * z <= MAX_DISPATCH_ITEMS)) {
      throw new KeelError(
        ErrorCode.OUT_OF_RANGE,
        `cpu device: dispatch of [${x}, ${y}, ${z}] workgroups exceeds ${max} per dimension or ${MAX_DISPATCH_ITEMS} in all`,
      );
    }
    const at = this.dispatchCommon(Opcode.DISPATCH, executable, entry, constants, bindings);
    const a = this.commands.array;
    a[at + Field.X] = x;
    a[at + Field.Y] = y;
    a[at + Field.Z] = z;
  }

  dispatchIndirect(
    executable: Executable,
    entry: number,
    params: StructureRef,
    paramsOffset: number,
    constants: Uint32Array,
    bindings: StructureBindings,
  ): void {
    const at = this.dispatchCommon(Opcode.DISPATCH_INDIRECT, executable, entry, constants, bindings);
    // The params ref is made after the bindings' refs; its index goes in the command.
    const ref = this.ref(params, paramsOffset, 12);
    const a = this.commands.array;
    a[at + Field.PARAMS_REF] = ref;
    a[at + Field.INDIRECT_INDEX] = this.indirectCount++;
  }

  barrier(): void {
    this.command(Opcode.BARRIER);
  }

  beginDebugGroup(_label: string): void {}

  endDebugGroup(): void {}

  /** Lays the arrays out in one block of `memory` (8-byte aligned sections). */
  finish(memory: PlanMemory): BuiltPlan {
    const commandBytes = this.commands.length * 4;
    const refBytes = this.refCount * REF_STRIDE * 8;
    const bindBytes = this.bindingRefs.length * 4;
    const constBytes = this.constantCount * 4;
    const dataBytes = this.dataLength;
    const align = (n: number) => (n + 7) & ~7;
    const oRefs = 0;
    const oCommands = align(oRefs + refBytes);
    const oBind = align(oCommands + commandBytes);
    const oConst = align(oBind + bindBytes);
    const oData = align(oConst + constBytes);
    const total = Math.max(8, align(oData + dataBytes));
    const buffer = memory(total);
    const refs = new Float64Array(buffer, oRefs, this.refCount * REF_STRIDE);
    refs.set(this.refs.subarray(0, this.refCount * REF_STRIDE));
    const commands = new Int32Array(buffer, oCommands, this.commands.length);
    commands.set(this.commands.array.subarray(0, this.commands.length));
    const bindingRefs = new Int32Array(buffer, oBind, this.bindingRefs.length);
    bindingRefs.set(this.bindingRefs.array.subarray(0, this.bindingRefs.length));
    const constants = new Uint32Array(buffer, oConst, this.constantCount);
    constants.set(this.constants.subarray(0, this.constantCount));
    const data = new Uint8Array(buffer, oData, dataBytes);
    data.set(this.data.subarray(0, dataBytes));
    return {
      arrays: {
        commandCount: this.commandCount,
        slotCount: this.slotCount,
        directCount: this.directBuffers.length,
        indirectCount: this.indirectCount,
        commands,
        refs,
        bindingRefs,
        constants,
        data,
      },
      directBuffers: this.directBuffers,
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
