/**
 * The recorder: the recording half of a DeferredCommandBuffer (its base class). It owns the lifecycle
 * state machine (initial → begin() → recording → end() → executable), checks each command at record
 * time (direct refs fully: device, liveness, usage, range, alignment, copy overlap; slot refs as far as
 * they can be without a table: slot within the capacity, relative offset and length alignment),
 * accumulates the requirements of every binding-table slot (./slot-requirements) for submission
 * validation, and writes each command into the compact recorded form (./recorded-commands, ./opcodes).
 *
 * Promises: a command that fails a check records nothing and leaves the state unchanged; recording a
 * command allocates nothing but amortized growth of the typed arrays (payloads are copied into arenas,
 * objects into de-duplicated tables); with validation off only the checks recording itself needs run
 * (state, the update source's type, a copy length). Error messages start with `name`.
 */
import {
  type BufferRef,
  type CommandBufferState,
  type Device,
  type DispatchConfig,
  describeBuffer,
  describeValue,
  type Executable,
  type ExecutableExport,
} from '@keel/hal';
import { directCode } from '@keel/hal/driver';
import { checkDispatch, countFromWorkload, dispatchFail, INDIRECT_PARAMS_BYTES } from './dispatch-checks';
import { fail, precondition, STATE_NAMES, State, wrongState } from './lifecycle';
import { Op, TO_END } from './opcodes';
import { checkRef, ROLE_USAGE, Role, refIsIndirect } from './record-checks';
import { RecordedCommands } from './recorded-commands';
import { SlotRequirements } from './slot-requirements';

const NO_BINDINGS: readonly BufferRef[] = [];

/** Bytes from a direct ref's offset to its buffer's end (0 past the end); undefined for a slot ref. */
function remaining(ref: BufferRef): number | undefined {
  if (ref === null || typeof ref !== 'object' || refIsIndirect(ref)) return undefined;
  const buffer = ref.buffer;
  if (buffer === null || typeof buffer !== 'object') return undefined;
  return Math.max(0, buffer.byteLength - (ref.offset ?? 0));
}

export class CommandRecorder {
  declare readonly device: Device;
  /** "command buffer 'label'" (or "command buffer"): how error messages name this command buffer. */
  declare readonly name: string;
  declare readonly bindingCapacity: number;
  declare readonly validation: boolean;
  /** @internal The device's maxUpdateSize. */
  declare readonly maxUpdateSize: number;
  /** @internal The device's maxWorkgroupCount. */
  declare readonly maxWorkgroupCount: readonly [number, number, number];
  /** @internal The device's minStorageBufferOffsetAlignment (1 when the device gives none). */
  declare readonly storageAlignment: number;

  /** @internal The recorded form this recorder writes. */
  readonly rec = new RecordedCommands();
  /** @internal Per-slot requirements (with validation off only the highest slot is noted). */
  readonly slots = new SlotRequirements();
  /** @internal The lifecycle state; the recorder moves it up to EXECUTABLE, the command buffer to CONSUMED. */
  st = State.INITIAL;
  #debugDepth = 0;

  // Export lookup cache (one entry: dispatch loops usually repeat one executable and entry).
  #exportOf: Executable | undefined;
  #entry: string | number | undefined;
  #export: ExecutableExport | undefined;

  /** The device's limits are read once, here. */
  constructor(device: Device, name: string, bindingCapacity: number, validation: boolean) {
    const limits = device.info.limits;
    const align = limits.minStorageBufferOffsetAlignment;
    Object.assign(this, {
      device,
      name,
      bindingCapacity,
      validation,
      maxUpdateSize: limits.maxUpdateSize ?? 65536,
      maxWorkgroupCount: limits.maxWorkgroupCount,
      storageAlignment: Number.isInteger(align) && align >= 1 ? align : 1,
    });
  }

  get state(): CommandBufferState {
    return STATE_NAMES[this.st]!;
  }

  // ---------------------------------------------------------------------------------------------------
  // Lifecycle

  /** initial → recording. FAILED_PRECONDITION in any other state: a command buffer is recorded once. */
  begin(): void {
    if (this.st !== State.INITIAL) {
      wrongState(this, 'begin', "a command buffer is recorded once, from state 'initial'");
    }
    this.st = State.RECORDING;
  }

  /**
   * recording → executable. FAILED_PRECONDITION outside recording or while debug groups are open (the
   * buffer then stays in recording).
   */
  end(): void {
    if (this.st !== State.RECORDING) wrongState(this, 'end', 'end() follows begin()');
    if (this.#debugDepth !== 0) {
      throw precondition(
        `${this.name}: end() with ${this.#debugDepth} debug group(s) still open; close each with endDebugGroup()`,
      );
    }
    this.st = State.EXECUTABLE;
  }

  /** FAILED_PRECONDITION unless recording; `command` names the call. */
  #recording(command: string): void {
    if (this.st !== State.RECORDING) {
      wrongState(this, command, 'commands are recorded between begin() and end()');
    }
  }

  /**
   * With validation off, what recording itself needs of a ref (so that bad input is an INVALID_ARGUMENT,
   * never a TypeError or a slot number read as a direct buffer): an object with a `slot` that is a
   * non-negative integer, or with a `buffer` object. O(1); everything else is replayed as given.
   */
  #shape(ref: BufferRef, what: string): void {
    if (ref !== null && typeof ref === 'object') {
      const slot = (ref as { slot?: unknown }).slot;
      const buffer = (ref as { buffer?: unknown }).buffer;
      if (
        typeof slot === 'number'
          ? Number.isInteger(slot) && slot >= 0
          : buffer !== null && typeof buffer === 'object'
      )
        return;
    }
    fail(
      this,
      `${what}: expected a buffer ref ({ buffer } or { slot: a non-negative integer }), got ${describeValue(ref)}`,
    );
  }

  // ---------------------------------------------------------------------------------------------------
  // Recording

  /**
   * Writes a ref's three words at `at`. `fixedLength` >= 0 is the length the command uses (copy,
   * update, indirect parameters); otherwise the ref's length, or for an omitted length: the rest of a
   * direct buffer, or TO_END for a slot. With validation on, a slot ref adds its requirements: the
   * role's usage, `align` for the offset and, for a fill to the end of the slot, for the length too.
   */
  #encodeRef(ref: BufferRef, at: number, fixedLength: number, role: Role, align: number): void {
    const rec = this.rec;
    const w = rec.words;
    const offset = ref.offset ?? 0;
    if (refIsIndirect(ref)) {
      const slot = ref.slot;
      const length = fixedLength >= 0 ? fixedLength : (ref.length ?? TO_END);
      w[at] = slot;
      w[at + 1] = offset;
      w[at + 2] = length;
      const toEnd = length === TO_END;
      if (!this.validation) this.slots.note(slot);
      else {
        const lengthAlign = toEnd && role === Role.FILL_TARGET ? align : 1;
        this.slots.add(slot, ROLE_USAGE[role]!, toEnd ? offset : offset + length, align, lengthAlign);
      }
      return;
    }
    const buffer = ref.buffer;
    w[at] = directCode(rec.buffers.intern(buffer));
    w[at + 1] = offset;
    w[at + 2] = fixedLength >= 0 ? fixedLength : (ref.length ?? buffer.byteLength - offset);
  }

  /**
   * Fills `target` with `pattern` repeated. Validation: `patternLength` is 1, 2 or 4; `pattern` is an
   * unsigned integer that fits in `patternLength` bytes; the target's offset and length are multiples
   * of `patternLength`; TRANSFER_TARGET usage. A slot ref without a length fills to the end of the
   * slot's range (whose length must then be a multiple of `patternLength`, checked per submission).
   */
  fill(target: BufferRef, pattern: number, patternLength: 1 | 2 | 4): void {
    this.#recording('fill');
    const rec = this.rec;
    if (this.validation) {
      if (patternLength !== 1 && patternLength !== 2 && patternLength !== 4) {
        fail(this, `fill: pattern length ${describeValue(patternLength)} is not 1, 2 or 4`);
      }
      if (!Number.isInteger(pattern) || pattern < 0 || pattern >= 2 ** (8 * patternLength)) {
        fail(
          this,
          `fill: pattern ${describeValue(pattern)} is not an unsigned integer that fits in ${patternLength} byte(s)`,
        );
      }
      checkRef(this, target, Role.FILL_TARGET, patternLength, -1);
    } else this.#shape(target, 'fill target');
    const at = rec.start(Op.FILL, 6);
    this.#encodeRef(target, at + 1, -1, Role.FILL_TARGET, patternLength);
    rec.words[at + 4] = pattern;
    rec.words[at + 5] = patternLength;
    rec.finish(at + 6);
  }

  /**
   * Copies the bytes of `source` into the command buffer now; they are written to `target` when the
   * command runs (later changes to `source` do not matter). Validation: at most the device's
   * maxUpdateSize (64 KiB) bytes; offset and size multiples of 4; a given target length equals the
   * source's size; TRANSFER_TARGET usage. `source` must be an ArrayBufferView (always checked).
   */
  update(source: ArrayBufferView, target: BufferRef): void {
    this.#recording('update');
    const rec = this.rec;
    if (!ArrayBuffer.isView(source)) {
      fail(this, `update: source must be an ArrayBufferView, got ${describeValue(source)}`);
    }
    const length = source.byteLength;
    if (this.validation) {
      if (length > this.maxUpdateSize) {
        fail(
          this,
          `update: ${length} bytes exceed the device's maxUpdateSize of ${this.maxUpdateSize} bytes`,
        );
      }
      if (length % 4 !== 0) fail(this, `update: source length ${length} is not a multiple of 4`);
      const given = target !== null && typeof target === 'object' ? target.length : undefined;
      if (given !== undefined && given !== length) {
        fail(this, `update target: length ${describeValue(given)} differs from the source's ${length} bytes`);
      }
      checkRef(this, target, Role.UPDATE_TARGET, 4, length);
    } else this.#shape(target, 'update target');
    const arenaOffset = rec.bytes.put(
      source instanceof Uint8Array ? source : new Uint8Array(source.buffer, source.byteOffset, length),
      length,
    );
    const at = rec.start(Op.UPDATE, 6);
    this.#encodeRef(target, at + 1, length, Role.UPDATE_TARGET, 4);
    rec.words[at + 4] = rec.bytes.payloads++;
    rec.words[at + 5] = arenaOffset;
    rec.finish(at + 6);
  }

  /**
   * Copies `source` to `target`. The copy length is fixed at record time: the source's length, else
   * the target's, else the rest of a direct source, else the rest of a direct target; two slot refs
   * without any length are INVALID_ARGUMENT (always checked). Validation: both lengths equal when both
   * are given; offsets and length multiples of 4; TRANSFER_SOURCE / TRANSFER_TARGET usage; ranges of one
   * buffer (or of one slot) must not overlap. Two different slots bound to one buffer are not checked for
   * overlap (that would cost O(copies) per submission; IREE does not check it either).
   */
  copy(source: BufferRef, target: BufferRef): void {
    this.#recording('copy');
    const rec = this.rec;
    const sourceLength = source?.length;
    const targetLength = target?.length;
    if (
      this.validation &&
      sourceLength !== undefined &&
      targetLength !== undefined &&
      sourceLength !== targetLength
    ) {
      fail(this, `copy: source length ${sourceLength} differs from target length ${targetLength}`);
    }
    const length = sourceLength ?? targetLength ?? remaining(source) ?? remaining(target);
    if (length === undefined) {
      fail(
        this,
        'copy: both refs are binding slots without a length; give the length on at least one of them',
      );
    }
    if (this.validation) {
      checkRef(this, source, Role.COPY_SOURCE, 4, length);
      checkRef(this, target, Role.COPY_TARGET, 4, length);
      this.#checkOverlap(source, target, length);
    } else {
      this.#shape(source, 'copy source');
      this.#shape(target, 'copy target');
    }
    const at = rec.start(Op.COPY, 7);
    this.#encodeRef(source, at + 1, length, Role.COPY_SOURCE, 4);
    this.#encodeRef(target, at + 4, length, Role.COPY_TARGET, 4);
    rec.finish(at + 7);
  }

  #checkOverlap(source: BufferRef, target: BufferRef, length: number): void {
    let what: string;
    if (refIsIndirect(source)) {
      if (!refIsIndirect(target) || source.slot !== target.slot) return;
      what = `binding slot ${source.slot}`;
    } else {
      if (refIsIndirect(target) || source.buffer !== target.buffer) return;
      what = describeBuffer(source.buffer);
    }
    const s = source.offset ?? 0;
    const t = target.offset ?? 0;
    if (length > 0 && s < t + length && t < s + length) {
      fail(
        this,
        `copy: source range [${s}, ${s + length}) and target range [${t}, ${t + length}) of ${what} overlap`,
      );
    }
  }

  /**
   * Records a dispatch of export `entry` of `executable`. The workgroup count is explicit, computed now
   * from `workload` by the export's `workgroupCount`, or read on the device from a 12-byte `indirect`
   * ref. Validation: the executable belongs to this device; binding and constant counts match the
   * export; constants are 32-bit integers; counts are integers within the device's maxWorkgroupCount;
   * bindings have DISPATCH_STORAGE or DISPATCH_UNIFORM usage and offsets that are multiples of the
   * device's minStorageBufferOffsetAlignment; indirect parameters have DISPATCH_INDIRECT_PARAMETERS
   * usage, a 4-byte aligned offset and 12 bytes (a given length must be 12). A binding slot ref without
   * a length binds to the end of the slot's range.
   */
  dispatch(executable: Executable, entry: string | number, config: DispatchConfig): void {
    this.#recording('dispatch');
    const rec = this.rec;
    if (config === null || typeof config !== 'object') {
      fail(this, `dispatch: config must be an object, got ${describeValue(config)}`);
    }
    // Shape checks recording needs, with or without validation.
    if (
      executable === null ||
      typeof executable !== 'object' ||
      typeof executable.lookupExport !== 'function'
    ) {
      fail(this, `dispatch: expected an executable, got ${describeValue(executable)}`);
    }
    if (this.validation) {
      if (executable.device !== this.device) {
        const label = executable.label;
        fail(
          this,
          `dispatch: executable${label === undefined ? '' : ` '${label}'`} belongs to another device`,
        );
      }
    }
    // One-entry export lookup cache: dispatch loops usually repeat one executable and entry.
    if (executable !== this.#exportOf || entry !== this.#entry) {
      this.#export = executable.lookupExport(entry);
      this.#exportOf = executable;
      this.#entry = entry;
    }
    const exp = this.#export!;
    let count: readonly number[] | undefined;
    let params: BufferRef | undefined;
    let workload: readonly number[] | undefined;
    const given =
      ('workgroupCount' in config ? 1 : 0) + ('workload' in config ? 1 : 0) + ('indirect' in config ? 1 : 0);
    if (given > 1) {
      const keys = ['workgroupCount', 'workload', 'indirect'].filter((k) => k in config).join(' and ');
      dispatchFail(
        this,
        exp,
        `: config has ${keys}; give exactly one of workgroupCount, workload or indirect`,
      );
    }
    if ('workgroupCount' in config) {
      count = config.workgroupCount;
      if (count === null || typeof count !== 'object') {
        dispatchFail(this, exp, ': workgroupCount must be [x, y, z]');
      }
    } else if ('workload' in config) {
      workload = config.workload;
      count = countFromWorkload(this, executable, exp, workload);
    } else if ('indirect' in config) {
      params = config.indirect;
      if (params === undefined) {
        dispatchFail(this, exp, ': indirect must be a buffer ref to 12 bytes (x, y, z as u32)');
      }
    } else {
      dispatchFail(this, exp, ': config needs workgroupCount, workload or indirect');
    }
    const bindings = config.bindings ?? NO_BINDINGS;
    const constants = config.constants;
    const constantCount = constants === undefined ? 0 : constants.length;
    if (this.validation) checkDispatch(this, exp, count, workload, params, bindings, constants);
    else {
      if (!Array.isArray(bindings)) dispatchFail(this, exp, ': bindings must be an array of buffer refs');
      if (params !== undefined) this.#shape(params, 'dispatch indirect parameters');
      for (let i = 0; i < bindings.length; i++) this.#shape(bindings[i]!, `dispatch binding ${i}`);
    }
    const bindingCount = bindings.length;

    let at = rec.start(params === undefined ? Op.DISPATCH : Op.DISPATCH_INDIRECT, 10 + 3 * bindingCount);
    const w = rec.words;
    w[at + 1] = rec.executables.intern(executable);
    w[at + 2] = exp.index;
    if (params === undefined) {
      w[at + 3] = count![0]!;
      w[at + 4] = count![1]!;
      w[at + 5] = count![2]!;
    } else {
      this.#encodeRef(params, at + 3, INDIRECT_PARAMS_BYTES, Role.INDIRECT_PARAMS, 4);
    }
    if (constantCount > 0 && constants !== undefined) {
      w[at + 6] = rec.constants.payloads++;
      w[at + 7] = rec.constants.put(constants, constantCount);
    } else {
      w[at + 6] = -1;
      w[at + 7] = 0;
    }
    w[at + 8] = constantCount;
    w[at + 9] = bindingCount;
    at += 10;
    const align = this.storageAlignment;
    for (let i = 0; i < bindingCount; i++) {
      this.#encodeRef(bindings[i]!, at, -1, Role.DISPATCH_BINDING, align);
      at += 3;
    }
    if (bindingCount > rec.maxBindingCount) rec.maxBindingCount = bindingCount;
    rec.finish(at);
  }

  /** Every command before the barrier completes before any command after it starts. */
  barrier(): void {
    this.#recording('barrier');
    const rec = this.rec;
    rec.finish(rec.start(Op.BARRIER, 1) + 1);
  }

  /** Opens a debug group; groups nest and must be closed before end(). */
  beginDebugGroup(label: string): void {
    this.#recording('beginDebugGroup');
    if (typeof label !== 'string')
      fail(this, `beginDebugGroup: label must be a string, got ${describeValue(label)}`);
    const rec = this.rec;
    const at = rec.start(Op.BEGIN_DEBUG_GROUP, 2);
    rec.words[at + 1] = rec.labels.push(label) - 1;
    this.#debugDepth++;
    rec.finish(at + 2);
  }

  /** Closes the innermost debug group; FAILED_PRECONDITION when none is open. */
  endDebugGroup(): void {
    this.#recording('endDebugGroup');
    if (this.#debugDepth === 0) {
      throw precondition(`${this.name}: endDebugGroup() without an open debug group`);
    }
    const rec = this.rec;
    rec.finish(rec.start(Op.END_DEBUG_GROUP, 1) + 1);
    this.#debugDepth--;
  }
}
