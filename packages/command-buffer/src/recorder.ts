/**
 * The recorder: the recording half of a DeferredCommandBuffer. It owns the lifecycle state machine
 * (initial → begin() → recording → end() → executable), checks each command at record time (direct refs
 * fully: device, liveness, usage, range, alignment, copy overlap; slot refs as far as they can be
 * without a table: slot within the capacity, relative offset and length alignment), accumulates the
 * requirements of every binding-table slot (./slot-requirements) for submission validation, and writes
 * each command into the compact recorded form (./recorded-commands, ./opcodes).
 *
 * Promises: a command that fails a check records nothing and leaves the state unchanged; recording a
 * command allocates nothing but amortized growth of the typed arrays (payloads are copied into arenas,
 * objects into de-duplicated tables); with validation off only the checks recording itself needs run
 * (state, the update source's type, a copy length). Error messages start with `name`.
 */
import {
  type BufferRef,
  BufferUsage,
  type CommandBufferState,
  type Device,
  type DispatchConfig,
  describeBuffer,
  describeValue,
  type Executable,
  type ExecutableExport,
} from '@keel/hal';
import { directCode, growTypedArray, invalid } from '@keel/hal/driver';
import {
  checkDispatch,
  countFromWorkload,
  type DispatchCheckContext,
  INDIRECT_PARAMS_BYTES,
} from './dispatch-checks';
import { EXECUTABLE, INITIAL, type LifecycleState, precondition, RECORDING, STATE_NAMES } from './lifecycle';
import { Op, TO_END } from './opcodes';
import { checkRef, Role, refIsIndirect } from './record-checks';
import { RecordedCommands } from './recorded-commands';
import { SlotRequirements } from './slot-requirements';
import { DISPATCH_ANY } from './usage-requirement';

const NO_BINDINGS: readonly BufferRef[] = [];

/** What the recorder takes from the command buffer's (already checked) options and device limits. */
export interface RecorderConfig {
  readonly device: Device;
  readonly name: string;
  readonly bindingCapacity: number;
  readonly validation: boolean;
  readonly maxUpdateSize: number;
  readonly maxWorkgroupCount: readonly [number, number, number];
  readonly storageAlignment: number;
}

export class CommandRecorder implements DispatchCheckContext {
  readonly device: Device;
  readonly name: string;
  readonly bindingCapacity: number;
  readonly validation: boolean;
  readonly maxUpdateSize: number;
  readonly maxWorkgroupCount: readonly [number, number, number];
  readonly storageAlignment: number;

  /** The recorded form this recorder writes. */
  readonly rec = new RecordedCommands();
  /** Per-slot requirements (with validation off only the highest slot is noted). */
  readonly slots = new SlotRequirements();
  /** The lifecycle state; the recorder moves it up to EXECUTABLE, the command buffer to CONSUMED. */
  st: LifecycleState = INITIAL;
  /** Commands recorded (debug-group markers included). */
  commands = 0;
  private debugDepth = 0;

  // Export lookup cache (one entry: dispatch loops usually repeat one executable and entry).
  private cachedExportOf: Executable | undefined;
  private cachedEntry: string | number | undefined;
  private cachedExport: ExecutableExport | undefined;

  constructor(config: RecorderConfig) {
    this.device = config.device;
    this.name = config.name;
    this.bindingCapacity = config.bindingCapacity;
    this.validation = config.validation;
    this.maxUpdateSize = config.maxUpdateSize;
    this.maxWorkgroupCount = config.maxWorkgroupCount;
    this.storageAlignment = config.storageAlignment;
  }

  get state(): CommandBufferState {
    return STATE_NAMES[this.st]!;
  }

  // ---------------------------------------------------------------------------------------------------
  // Lifecycle

  /** initial → recording. FAILED_PRECONDITION in any other state: a command buffer is recorded once. */
  begin(): void {
    if (this.st !== INITIAL) {
      throw precondition(
        `${this.name}: begin() called in state '${this.state}'; a command buffer is recorded once, from state 'initial'`,
      );
    }
    this.st = RECORDING;
  }

  /**
   * recording → executable. FAILED_PRECONDITION outside recording or while debug groups are open (the
   * buffer then stays in recording).
   */
  end(): void {
    if (this.st !== RECORDING) {
      throw precondition(`${this.name}: end() called in state '${this.state}'; end() follows begin()`);
    }
    if (this.debugDepth !== 0) {
      throw precondition(
        `${this.name}: end() with ${this.debugDepth} debug group(s) still open; close each with endDebugGroup()`,
      );
    }
    this.st = EXECUTABLE;
  }

  private notRecording(command: string): never {
    throw precondition(
      `${this.name}: ${command}() called in state '${this.state}'; commands are recorded between begin() and end()`,
    );
  }

  // ---------------------------------------------------------------------------------------------------
  // Recording

  /**
   * Writes a ref's three words at `at`. `fixedLength` >= 0 is the length the command uses (copy,
   * update, indirect parameters); otherwise the ref's length, or for an omitted length: the rest of a
   * direct buffer, or TO_END for a slot. With validation on, a slot ref adds its requirements.
   */
  private encodeRef(
    ref: BufferRef,
    at: number,
    fixedLength: number,
    usage: number,
    offsetAlign: number,
    toEndLengthAlign: number,
  ): void {
    const rec = this.rec;
    const w = rec.words;
    const offset = ref.offset ?? 0;
    if (refIsIndirect(ref)) {
      const slot = ref.slot;
      const length = fixedLength >= 0 ? fixedLength : (ref.length ?? TO_END);
      w[at] = slot;
      w[at + 1] = offset;
      w[at + 2] = length;
      if (this.validation) {
        if (length === TO_END) this.slots.add(slot, usage, offset, offsetAlign, toEndLengthAlign);
        else this.slots.add(slot, usage, offset + length, offsetAlign, 1);
      } else {
        this.slots.note(slot);
      }
      return;
    }
    const buffer = ref.buffer;
    w[at] = directCode(rec.internBuffer(buffer));
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
    if (this.st !== RECORDING) this.notRecording('fill');
    const rec = this.rec;
    if (this.validation) {
      if (patternLength !== 1 && patternLength !== 2 && patternLength !== 4) {
        throw invalid(`${this.name}: fill: pattern length ${describeValue(patternLength)} is not 1, 2 or 4`);
      }
      if (!Number.isInteger(pattern) || pattern < 0 || pattern >= 2 ** (8 * patternLength)) {
        throw invalid(
          `${this.name}: fill: pattern ${describeValue(pattern)} is not an unsigned integer that fits in ${patternLength} byte(s)`,
        );
      }
      checkRef(
        this,
        target,
        BufferUsage.TRANSFER_TARGET,
        patternLength,
        patternLength,
        Role.FILL_TARGET,
        0,
        '',
        -1,
      );
    }
    rec.reserve(7);
    const at = rec.n;
    rec.words[at] = Op.FILL;
    this.encodeRef(target, at + 1, -1, BufferUsage.TRANSFER_TARGET, patternLength, patternLength);
    rec.words[at + 4] = pattern;
    rec.words[at + 5] = patternLength;
    rec.n = at + 6;
    this.commands++;
  }

  /**
   * Copies the bytes of `source` into the command buffer now; they are written to `target` when the
   * command runs (later changes to `source` do not matter). Validation: at most the device's
   * maxUpdateSize (64 KiB) bytes; offset and size multiples of 4; a given target length equals the
   * source's size; TRANSFER_TARGET usage. `source` must be an ArrayBufferView (always checked).
   */
  update(source: ArrayBufferView, target: BufferRef): void {
    if (this.st !== RECORDING) this.notRecording('update');
    const rec = this.rec;
    if (!ArrayBuffer.isView(source)) {
      throw invalid(`${this.name}: update: source must be an ArrayBufferView, got ${describeValue(source)}`);
    }
    const length = source.byteLength;
    if (this.validation) {
      if (length > this.maxUpdateSize) {
        throw invalid(
          `${this.name}: update: ${length} bytes exceed the device's maxUpdateSize of ${this.maxUpdateSize} bytes`,
        );
      }
      if (length % 4 !== 0) {
        throw invalid(`${this.name}: update: source length ${length} is not a multiple of 4`);
      }
      if (
        target !== null &&
        typeof target === 'object' &&
        target.length !== undefined &&
        target.length !== length
      ) {
        throw invalid(
          `${this.name}: update target: length ${describeValue(target.length)} differs from the source's ${length} bytes`,
        );
      }
      checkRef(this, target, BufferUsage.TRANSFER_TARGET, 4, 4, Role.UPDATE_TARGET, 0, '', length);
    }
    const arenaOffset = rec.bytesUsed;
    if (arenaOffset + length > rec.bytes.length) {
      rec.bytes = growTypedArray(rec.bytes, arenaOffset, arenaOffset + length);
    }
    const view =
      source instanceof Uint8Array
        ? source
        : new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
    rec.bytes.set(view, arenaOffset);
    rec.bytesUsed = arenaOffset + length;
    rec.reserve(6);
    const at = rec.n;
    rec.words[at] = Op.UPDATE;
    this.encodeRef(target, at + 1, length, BufferUsage.TRANSFER_TARGET, 4, 1);
    rec.words[at + 4] = rec.updateCommands++;
    rec.words[at + 5] = arenaOffset;
    rec.n = at + 6;
    this.commands++;
  }

  /** Bytes from a direct ref's offset to its buffer's end (0 past the end); undefined for a slot ref. */
  private static remaining(ref: BufferRef): number | undefined {
    if (ref === null || typeof ref !== 'object' || refIsIndirect(ref)) return undefined;
    const buffer = ref.buffer;
    if (buffer === null || typeof buffer !== 'object') return undefined;
    return Math.max(0, buffer.byteLength - (ref.offset ?? 0));
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
    if (this.st !== RECORDING) this.notRecording('copy');
    const rec = this.rec;
    const sourceLength = source?.length;
    const targetLength = target?.length;
    if (
      this.validation &&
      sourceLength !== undefined &&
      targetLength !== undefined &&
      sourceLength !== targetLength
    ) {
      throw invalid(
        `${this.name}: copy: source length ${sourceLength} differs from target length ${targetLength}`,
      );
    }
    const length =
      sourceLength ?? targetLength ?? CommandRecorder.remaining(source) ?? CommandRecorder.remaining(target);
    if (length === undefined) {
      throw invalid(
        `${this.name}: copy: both refs are binding slots without a length; give the length on at least one of them`,
      );
    }
    if (this.validation) {
      checkRef(this, source, BufferUsage.TRANSFER_SOURCE, 4, 4, Role.COPY_SOURCE, 0, '', length);
      checkRef(this, target, BufferUsage.TRANSFER_TARGET, 4, 4, Role.COPY_TARGET, 0, '', length);
      this.checkOverlap(source, target, length);
    }
    rec.reserve(7);
    const at = rec.n;
    rec.words[at] = Op.COPY;
    this.encodeRef(source, at + 1, length, BufferUsage.TRANSFER_SOURCE, 4, 1);
    this.encodeRef(target, at + 4, length, BufferUsage.TRANSFER_TARGET, 4, 1);
    rec.n = at + 7;
    this.commands++;
  }

  private checkOverlap(source: BufferRef, target: BufferRef, length: number): void {
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
      throw invalid(
        `${this.name}: copy: source range [${s}, ${s + length}) and target range [${t}, ${t + length}) of ${what} overlap`,
      );
    }
  }

  private lookupExport(executable: Executable, entry: string | number): ExecutableExport {
    if (executable === this.cachedExportOf && entry === this.cachedEntry) return this.cachedExport!;
    const found = executable.lookupExport(entry);
    this.cachedExportOf = executable;
    this.cachedEntry = entry;
    this.cachedExport = found;
    return found;
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
    if (this.st !== RECORDING) this.notRecording('dispatch');
    const rec = this.rec;
    if (config === null || typeof config !== 'object') {
      throw invalid(`${this.name}: dispatch: config must be an object, got ${describeValue(config)}`);
    }
    if (this.validation) {
      if (executable === null || typeof executable !== 'object') {
        throw invalid(`${this.name}: dispatch: expected an executable, got ${describeValue(executable)}`);
      }
      if (executable.device !== this.device) {
        const which = executable.label === undefined ? 'executable' : `executable '${executable.label}'`;
        throw invalid(`${this.name}: dispatch: ${which} belongs to another device`);
      }
    }
    const exp = this.lookupExport(executable, entry);
    let x = 0;
    let y = 0;
    let z = 0;
    let params: BufferRef | undefined;
    let workload: readonly number[] | undefined;
    if ('workgroupCount' in config) {
      const count = config.workgroupCount;
      if (this.validation && (count === null || typeof count !== 'object')) {
        throw invalid(`${this.name}: dispatch '${exp.name}': workgroupCount must be [x, y, z]`);
      }
      x = count[0];
      y = count[1];
      z = count[2];
    } else if ('workload' in config) {
      workload = config.workload;
      const count = countFromWorkload(this, executable, exp, workload);
      x = count[0];
      y = count[1];
      z = count[2];
    } else if ('indirect' in config) {
      params = config.indirect;
    } else {
      throw invalid(
        `${this.name}: dispatch '${exp.name}': config needs workgroupCount, workload or indirect`,
      );
    }
    const bindings = config.bindings ?? NO_BINDINGS;
    const constants = config.constants;
    const constantCount = constants === undefined ? 0 : constants.length;
    if (this.validation) checkDispatch(this, exp, x, y, z, workload, params, bindings, constants);
    const bindingCount = bindings.length;

    rec.reserve(10 + 3 * bindingCount);
    const w = rec.words;
    let at = rec.n;
    w[at + 1] = rec.internExecutable(executable);
    w[at + 2] = exp.index;
    if (params === undefined) {
      w[at] = Op.DISPATCH;
      w[at + 3] = x;
      w[at + 4] = y;
      w[at + 5] = z;
    } else {
      w[at] = Op.DISPATCH_INDIRECT;
      this.encodeRef(params, at + 3, INDIRECT_PARAMS_BYTES, BufferUsage.DISPATCH_INDIRECT_PARAMETERS, 4, 1);
    }
    if (constantCount > 0 && constants !== undefined) {
      const offset = rec.constantsUsed;
      if (offset + constantCount > rec.constants.length) {
        rec.constants = growTypedArray(rec.constants, offset, offset + constantCount);
      }
      const arena = rec.constants;
      for (let i = 0; i < constantCount; i++) arena[offset + i] = constants[i]!;
      rec.constantsUsed = offset + constantCount;
      w[at + 6] = rec.constantCommands++;
      w[at + 7] = offset;
    } else {
      w[at + 6] = -1;
      w[at + 7] = 0;
    }
    w[at + 8] = constantCount;
    w[at + 9] = bindingCount;
    at += 10;
    const align = this.storageAlignment;
    for (let i = 0; i < bindingCount; i++) {
      this.encodeRef(bindings[i]!, at, -1, DISPATCH_ANY, align, 1);
      at += 3;
    }
    rec.n = at;
    if (bindingCount > rec.maxBindingCount) rec.maxBindingCount = bindingCount;
    this.commands++;
  }

  /** Every command before the barrier completes before any command after it starts. */
  barrier(): void {
    if (this.st !== RECORDING) this.notRecording('barrier');
    const rec = this.rec;
    rec.reserve(1);
    rec.words[rec.n++] = Op.BARRIER;
    this.commands++;
  }

  /** Opens a debug group; groups nest and must be closed before end(). */
  beginDebugGroup(label: string): void {
    if (this.st !== RECORDING) this.notRecording('beginDebugGroup');
    const rec = this.rec;
    rec.reserve(2);
    rec.words[rec.n] = Op.BEGIN_DEBUG_GROUP;
    rec.words[rec.n + 1] = rec.labels.length;
    rec.labels.push(String(label));
    rec.n += 2;
    this.debugDepth++;
    this.commands++;
  }

  /** Closes the innermost debug group; FAILED_PRECONDITION when none is open. */
  endDebugGroup(): void {
    if (this.st !== RECORDING) this.notRecording('endDebugGroup');
    const rec = this.rec;
    if (this.debugDepth === 0) {
      throw precondition(`${this.name}: endDebugGroup() without an open debug group`);
    }
    rec.reserve(1);
    rec.words[rec.n++] = Op.END_DEBUG_GROUP;
    this.debugDepth--;
    this.commands++;
  }
}
