/**
 * The deferred command buffer (IREE's iree_hal_deferred_command_buffer_t): records commands into a
 * compact opcode stream (see ./opcodes), validates direct refs at record time and accumulates per-slot
 * requirements for indirect refs, validates each submission in O(slots used), and replays the stream
 * into any CommandSink with indirect refs resolved through a binding table, or into a StructureSink
 * with refs as recorded (slot indices and slot-relative ranges) for devices that build their own plan.
 *
 * Ownership: the command buffer keeps every directly referenced buffer and executable reachable for its
 * lifetime (it does not keep them live: a direct buffer destroyed after recording fails the next
 * submission with FAILED_PRECONDITION). `update` copies its bytes at the call; `dispatch` copies its
 * constants at the call. Nothing the caller passes is retained except buffers, executables and strings.
 *
 * Thread model: single-threaded; `replay` and `replayStructure` are not re-entrant for one command
 * buffer (they reuse one bindings object), but different command buffers may be replayed from inside a
 * sink.
 */
import {
  type BindingTable,
  type Buffer,
  type BufferRef,
  BufferUsage,
  type CommandBuffer,
  type CommandBufferMode,
  type CommandBufferOptions,
  type CommandBufferState,
  type CommandSink,
  checkOptions,
  type Device,
  type DispatchConfig,
  describeBuffer,
  describeValue,
  ErrorCode,
  type Executable,
  type ExecutableExport,
  KeelError,
  type OptionRules,
  QueueAffinity,
  type ResolvedBindings,
  type StructureBindings,
  type StructureRef,
  type StructureSink,
  type WorkgroupCount,
} from '@keel/hal';
import { growFloat64, growUint8, growUint32 } from './growable';
import { Op, slotOfCode, TO_END } from './opcodes';
import { checkRef, isU32Like, type RecordContext, Role, refIsIndirect } from './record-checks';
import { type SlotRequirement, SlotRequirements } from './slot-requirements';
import { DISPATCH_ANY } from './usage-requirement';

const INITIAL = 0;
const RECORDING = 1;
const EXECUTABLE = 2;
const CONSUMED = 3;
const STATE_NAMES: readonly CommandBufferState[] = ['initial', 'recording', 'executable', 'consumed'];

const EMPTY_CONSTANTS = new Uint32Array(0);
const NO_BINDINGS: readonly BufferRef[] = [];
/** Bytes an indirect dispatch reads: x, y, z as u32. */
const INDIRECT_PARAMS_BYTES = 12;
const DEFAULT_MAX_UPDATE_SIZE = 65536;

/**
 * The one bindings object a command buffer reuses for every dispatch it replays: ResolvedBindings for
 * `replay` (buffers), StructureBindings for `replayStructure` (refs); both name the same array.
 */
class ReusedBindings implements ResolvedBindings, StructureBindings {
  count = 0;
  /** The sink's view: entries below `count` are set during a dispatch call. */
  readonly buffers: readonly Buffer[];
  readonly refs: readonly StructureRef[];
  /** The same array, writable; cleared after each replay so no table buffer stays reachable. */
  readonly slots: (StructureRef | undefined)[];
  readonly offsets: Float64Array;
  readonly lengths: Float64Array;
  constructor(capacity: number) {
    this.slots = new Array<StructureRef | undefined>(capacity).fill(undefined);
    this.buffers = this.slots as readonly Buffer[];
    this.refs = this.slots as readonly StructureRef[];
    this.offsets = new Float64Array(capacity);
    this.lengths = new Float64Array(capacity);
  }
}

/** True for a workgroup count that is an integer in [0, max]. */
function countFits(count: number, max: number): boolean {
  return Number.isInteger(count) && count >= 0 && count <= max;
}

function invalid(message: string): KeelError {
  return new KeelError(ErrorCode.INVALID_ARGUMENT, message);
}

function precondition(message: string): KeelError {
  return new KeelError(ErrorCode.FAILED_PRECONDITION, message);
}

/** "executable 'mlp'" (or "an executable without a label"), for messages. */
function describeExecutable(executable: Executable): string {
  return executable.label === undefined
    ? 'an executable without a label'
    : `executable '${executable.label}'`;
}

/** A workgroupCount result as messages show it: `[1, "2"]`-style for arrays, else describeValue. */
function describeCount(count: unknown): string {
  return Array.isArray(count)
    ? `[${count.map((c: unknown) => describeValue(c)).join(', ')}]`
    : describeValue(count);
}

/** Options of createCommandBuffer (unknown keys and wrong types are INVALID_ARGUMENT). */
const OPTION_RULES: OptionRules = {
  mode: { type: 'string', oneOf: ['one-shot', 'reusable'] },
  bindingCapacity: { type: 'integer', min: 0, max: 0x7fffffff },
  affinity: { type: 'custom', expected: 'a 32-bit integer queue mask', check: QueueAffinity.isValid },
  validation: { type: 'boolean' },
  label: { type: 'string' },
};

export class DeferredCommandBuffer implements CommandBuffer, RecordContext {
  readonly device: Device;
  readonly mode: CommandBufferMode;
  readonly bindingCapacity: number;
  readonly affinity: QueueAffinity;
  readonly validation: boolean;
  readonly label: string | undefined;
  /** "command buffer 'label'" (or "command buffer"): how error messages name this command buffer. */
  readonly name: string;

  private st = INITIAL;
  private commands = 0;
  private submissions = 0;
  private debugDepth = 0;

  // The opcode stream (./opcodes).
  private words = new Float64Array(256);
  private n = 0;

  // Side tables: direct buffers and executables de-duplicated; debug labels.
  private readonly buffers: Buffer[] = [];
  private readonly bufferIndex = new Map<Buffer, number>();
  private lastBuffer: Buffer | undefined;
  private lastBufferIndex = 0;
  private readonly executables: Executable[] = [];
  private readonly executableIndex = new Map<Executable, number>();
  private lastExecutable: Executable | undefined;
  private lastExecutableIndex = 0;
  private readonly labels: string[] = [];

  // Export lookup cache (one entry: dispatch loops usually repeat one executable and entry).
  private cachedExportOf: Executable | undefined;
  private cachedEntry: string | number | undefined;
  private cachedExport: ExecutableExport | undefined;

  // Arenas: dispatch constants (u32) and update payloads (bytes).
  private constants = new Uint32Array(64);
  private constantsUsed = 0;
  private constantCommands = 0;
  private bytes = new Uint8Array(0);
  private bytesUsed = 0;
  private updateCommands = 0;
  private maxBindingCount = 0;

  private readonly slots = new SlotRequirements();
  private plans: WeakMap<object, unknown> | undefined;

  // Replay state, made at the first replay: payload views and the reused bindings object.
  private constantViews: Uint32Array[] | undefined;
  private updateViews: Uint8Array[] | undefined;
  private resolvedBindings: ReusedBindings | undefined;
  private rBuffer: StructureRef | undefined;
  private rOffset = 0;
  private rLength = 0;

  // Device limits, read once.
  private readonly maxUpdateSize: number;
  private readonly maxWorkgroupCount: readonly [number, number, number];
  private readonly storageAlignment: number;

  /**
   * Validates `options` (INVALID_ARGUMENT naming the option): `mode` 'one-shot' (default) or
   * 'reusable'; `bindingCapacity` an integer in [0, 2^31) (default 0); `affinity` selecting at least one
   * of the device's queues (default ANY); `validation` (default true); `label`.
   */
  constructor(device: Device, rawOptions?: CommandBufferOptions) {
    const options = checkOptions<CommandBufferOptions>('createCommandBuffer', rawOptions, OPTION_RULES);
    const label = options.label;
    this.label = label;
    this.name = this.label === undefined ? 'command buffer' : `command buffer '${this.label}'`;
    this.device = device;
    const mode = options.mode ?? 'one-shot';
    if (mode !== 'one-shot' && mode !== 'reusable') {
      throw invalid(`${this.name}: mode must be 'one-shot' or 'reusable', got ${describeValue(mode)}`);
    }
    this.mode = mode;
    const capacity = options.bindingCapacity ?? 0;
    if (!Number.isInteger(capacity) || capacity < 0 || capacity > 0x7fffffff) {
      throw invalid(
        `${this.name}: bindingCapacity must be an integer in [0, 2^31), got ${describeValue(capacity)}`,
      );
    }
    this.bindingCapacity = capacity;
    const affinity = options.affinity ?? QueueAffinity.ANY;
    QueueAffinity.select(affinity, device.info.queueCount, `${this.name}: option 'affinity'`);
    this.affinity = affinity >>> 0;
    this.validation = options.validation !== false;
    const limits = device.info.limits;
    this.maxUpdateSize = limits.maxUpdateSize ?? DEFAULT_MAX_UPDATE_SIZE;
    this.maxWorkgroupCount = limits.maxWorkgroupCount;
    const align = limits.minStorageBufferOffsetAlignment;
    this.storageAlignment = Number.isInteger(align) && align >= 1 ? align : 1;
  }

  get state(): CommandBufferState {
    return STATE_NAMES[this.st]!;
  }

  get commandCount(): number {
    return this.commands;
  }

  /** Times `markSubmitted` was called. */
  get submissionCount(): number {
    return this.submissions;
  }

  /** Words in the opcode stream plus bytes of payload arenas: the recorded form's size, in bytes. */
  get recordedBytes(): number {
    return this.n * 8 + this.constantsUsed * 4 + this.bytesUsed;
  }

  /**
   * The accumulated requirements of every binding-table slot the commands use, in first-use order.
   * Empty when validation is off (requirements are then not tracked).
   */
  slotRequirements(): SlotRequirement[] {
    return this.slots.toArray();
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

  private reserve(words: number): void {
    const needed = this.n + words;
    if (needed > this.words.length) this.words = growFloat64(this.words, this.n, needed);
  }

  private internBuffer(buffer: Buffer): number {
    if (buffer === this.lastBuffer) return this.lastBufferIndex;
    let index = this.bufferIndex.get(buffer);
    if (index === undefined) {
      index = this.buffers.length;
      this.buffers.push(buffer);
      this.bufferIndex.set(buffer, index);
    }
    this.lastBuffer = buffer;
    this.lastBufferIndex = index;
    return index;
  }

  private internExecutable(executable: Executable): number {
    if (executable === this.lastExecutable) return this.lastExecutableIndex;
    let index = this.executableIndex.get(executable);
    if (index === undefined) {
      index = this.executables.length;
      this.executables.push(executable);
      this.executableIndex.set(executable, index);
    }
    this.lastExecutable = executable;
    this.lastExecutableIndex = index;
    return index;
  }

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
    const w = this.words;
    const offset = ref.offset ?? 0;
    if (refIsIndirect(ref)) {
      const slot = ref.slot;
      const length = fixedLength >= 0 ? fixedLength : (ref.length ?? TO_END);
      w[at] = -slot - 1;
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
    w[at] = this.internBuffer(buffer);
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
    this.reserve(7);
    const at = this.n;
    this.words[at] = Op.FILL;
    this.encodeRef(target, at + 1, -1, BufferUsage.TRANSFER_TARGET, patternLength, patternLength);
    this.words[at + 4] = pattern;
    this.words[at + 5] = patternLength;
    this.n = at + 6;
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
    const arenaOffset = this.bytesUsed;
    if (arenaOffset + length > this.bytes.length) {
      this.bytes = growUint8(this.bytes, arenaOffset, arenaOffset + length);
    }
    const view =
      source instanceof Uint8Array
        ? source
        : new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
    this.bytes.set(view, arenaOffset);
    this.bytesUsed = arenaOffset + length;
    this.reserve(6);
    const at = this.n;
    this.words[at] = Op.UPDATE;
    this.encodeRef(target, at + 1, length, BufferUsage.TRANSFER_TARGET, 4, 1);
    this.words[at + 4] = this.updateCommands++;
    this.words[at + 5] = arenaOffset;
    this.n = at + 6;
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
      sourceLength ??
      targetLength ??
      DeferredCommandBuffer.remaining(source) ??
      DeferredCommandBuffer.remaining(target);
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
    this.reserve(7);
    const at = this.n;
    this.words[at] = Op.COPY;
    this.encodeRef(source, at + 1, length, BufferUsage.TRANSFER_SOURCE, 4, 1);
    this.encodeRef(target, at + 4, length, BufferUsage.TRANSFER_TARGET, 4, 1);
    this.n = at + 7;
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
   * The export's workgroupCount(workload), checked: the workload is an array of non-negative safe
   * integers, the call's exception becomes a KeelError naming the executable and the export (its code
   * if it is a KeelError, else INVALID_ARGUMENT; cause = the exception), and the result must be three
   * non-negative integers. Record time only (not a replay path).
   */
  private countFromWorkload(
    executable: Executable,
    exp: ExecutableExport,
    workload: readonly number[],
  ): WorkgroupCount {
    const which = `${this.name}: dispatch of export '${exp.name}' of ${describeExecutable(executable)}`;
    if (!Array.isArray(workload)) {
      throw invalid(
        `${which}: workload must be an array of non-negative integers, got ${describeValue(workload)}`,
      );
    }
    for (let i = 0; i < workload.length; i++) {
      const v: unknown = workload[i];
      if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
        throw invalid(
          `${which}: workload[${i}] must be a non-negative safe integer, got ${describeValue(v)}`,
        );
      }
    }
    if (typeof exp.workgroupCount !== 'function') {
      throw invalid(`${which}: workgroupCount is not a function (${describeValue(exp.workgroupCount)})`);
    }
    let count: unknown;
    try {
      count = exp.workgroupCount(workload);
    } catch (error) {
      const detail = error instanceof Error ? `${error.name}: ${error.message}` : describeValue(error);
      throw new KeelError(
        KeelError.is(error) ? error.code : ErrorCode.INVALID_ARGUMENT,
        `${which}: workgroupCount([${workload.join(', ')}]) threw ${detail}`,
        { cause: error },
      );
    }
    if (
      !Array.isArray(count) ||
      count.length !== 3 ||
      !count.every((c: unknown) => typeof c === 'number' && Number.isSafeInteger(c) && c >= 0)
    ) {
      throw invalid(
        `${which}: workgroupCount([${workload.join(', ')}]) must return three non-negative integers [x, y, z], got ${describeCount(count)}`,
      );
    }
    return count as unknown as WorkgroupCount;
  }

  private checkWorkgroupCount(
    exp: ExecutableExport,
    x: number,
    y: number,
    z: number,
    workload: readonly number[] | undefined,
  ): void {
    const max = this.maxWorkgroupCount;
    if (countFits(x, max[0]) && countFits(y, max[1]) && countFits(z, max[2])) return;
    const counts = [x, y, z];
    const from = workload === undefined ? '' : ` (computed from workload [${workload.join(', ')}])`;
    for (let i = 0; i < 3; i++) {
      const c = counts[i]!;
      const axis = 'xyz'[i]!;
      if (!Number.isInteger(c) || c < 0) {
        throw invalid(
          `${this.name}: dispatch '${exp.name}': workgroup count ${axis} must be a non-negative integer, got ${describeValue(c)}${from}`,
        );
      }
      if (c > max[i]!) {
        throw invalid(
          `${this.name}: dispatch '${exp.name}': workgroup count ${axis} = ${c} exceeds the device's maxWorkgroupCount[${i}] of ${max[i]}${from}`,
        );
      }
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
    if (this.st !== RECORDING) this.notRecording('dispatch');
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
      const count = this.countFromWorkload(executable, exp, workload);
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
    if (this.validation) this.checkDispatch(exp, x, y, z, workload, params, bindings, constants);
    const bindingCount = bindings.length;

    this.reserve(10 + 3 * bindingCount);
    const w = this.words;
    let at = this.n;
    w[at + 1] = this.internExecutable(executable);
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
      const offset = this.constantsUsed;
      if (offset + constantCount > this.constants.length) {
        this.constants = growUint32(this.constants, offset, offset + constantCount);
      }
      const arena = this.constants;
      for (let i = 0; i < constantCount; i++) arena[offset + i] = constants[i]!;
      this.constantsUsed = offset + constantCount;
      w[at + 6] = this.constantCommands++;
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
    this.n = at;
    if (bindingCount > this.maxBindingCount) this.maxBindingCount = bindingCount;
    this.commands++;
  }

  private checkDispatch(
    exp: ExecutableExport,
    x: number,
    y: number,
    z: number,
    workload: readonly number[] | undefined,
    params: BufferRef | undefined,
    bindings: readonly BufferRef[],
    constants: Uint32Array | readonly number[] | undefined,
  ): void {
    if (params === undefined) {
      this.checkWorkgroupCount(exp, x, y, z, workload);
    } else {
      const given = params?.length;
      if (given !== undefined && given !== INDIRECT_PARAMS_BYTES) {
        throw invalid(
          `${this.name}: dispatch '${exp.name}' indirect parameters: length ${given} is not the 12 bytes (x, y, z as u32) an indirect dispatch reads`,
        );
      }
      checkRef(
        this,
        params,
        BufferUsage.DISPATCH_INDIRECT_PARAMETERS,
        4,
        1,
        Role.INDIRECT_PARAMS,
        0,
        exp.name,
        INDIRECT_PARAMS_BYTES,
      );
    }
    if (!Array.isArray(bindings)) {
      throw invalid(`${this.name}: dispatch '${exp.name}': bindings must be an array of buffer refs`);
    }
    if (bindings.length !== exp.bindingCount) {
      throw invalid(
        `${this.name}: dispatch '${exp.name}': ${bindings.length} binding(s) given, the export takes ${exp.bindingCount}`,
      );
    }
    const constantCount = constants === undefined ? 0 : constants.length;
    if (constantCount !== exp.constantCount) {
      throw invalid(
        `${this.name}: dispatch '${exp.name}': ${constantCount} constant(s) given, the export takes ${exp.constantCount}`,
      );
    }
    if (constants !== undefined && !(constants instanceof Uint32Array)) {
      for (let i = 0; i < constantCount; i++) {
        const c = constants[i]!;
        if (!isU32Like(c)) {
          throw invalid(
            `${this.name}: dispatch '${exp.name}' constant ${i}: ${describeValue(c)} is not a 32-bit integer (bit-cast floats first)`,
          );
        }
      }
    }
    const align = this.storageAlignment;
    for (let i = 0; i < bindings.length; i++) {
      checkRef(this, bindings[i]!, DISPATCH_ANY, align, 1, Role.DISPATCH_BINDING, i, exp.name, -1);
    }
  }

  /** Every command before the barrier completes before any command after it starts. */
  barrier(): void {
    if (this.st !== RECORDING) this.notRecording('barrier');
    this.reserve(1);
    this.words[this.n++] = Op.BARRIER;
    this.commands++;
  }

  /** Opens a debug group; groups nest and must be closed before end(). */
  beginDebugGroup(label: string): void {
    if (this.st !== RECORDING) this.notRecording('beginDebugGroup');
    this.reserve(2);
    this.words[this.n] = Op.BEGIN_DEBUG_GROUP;
    this.words[this.n + 1] = this.labels.length;
    this.labels.push(String(label));
    this.n += 2;
    this.debugDepth++;
    this.commands++;
  }

  /** Closes the innermost debug group; FAILED_PRECONDITION when none is open. */
  endDebugGroup(): void {
    if (this.st !== RECORDING) this.notRecording('endDebugGroup');
    if (this.debugDepth === 0) {
      throw precondition(`${this.name}: endDebugGroup() without an open debug group`);
    }
    this.reserve(1);
    this.words[this.n++] = Op.END_DEBUG_GROUP;
    this.debugDepth--;
    this.commands++;
  }

  // ---------------------------------------------------------------------------------------------------
  // Submission

  private notSubmittable(): never {
    if (this.st === CONSUMED) {
      throw precondition(`${this.name}: a one-shot command buffer cannot be submitted twice`);
    }
    throw precondition(
      `${this.name}: cannot be submitted in state '${this.state}'; record it and call end() first`,
    );
  }

  /**
   * Validates a submission in O(slots used + distinct direct buffers):
   * - state: executable (FAILED_PRECONDITION; a consumed one-shot buffer: "cannot be submitted twice");
   * - when any slot is used: a table is given and has an entry for the highest slot (INVALID_ARGUMENT);
   * - with validation on, each used slot: see SlotRequirements.validate (entry present, buffer of this
   *   device, live, usage, range, alignment), and every directly referenced buffer is still live.
   * With validation off only the state and the table's length are checked.
   */
  validateSubmission(bindingTable?: BindingTable): void {
    if (this.st !== EXECUTABLE) this.notSubmittable();
    const maxSlot = this.slots.maxSlot;
    if (maxSlot >= 0) {
      if (bindingTable === undefined || bindingTable === null) {
        throw invalid(
          `${this.name}: recorded commands use binding slots (up to slot ${maxSlot}) but no binding table was given`,
        );
      }
      if (bindingTable.length <= maxSlot) {
        throw invalid(
          `${this.name}: binding table has ${bindingTable.length} entries but recorded commands use slot ${maxSlot}`,
        );
      }
    }
    if (!this.validation) return;
    if (maxSlot >= 0 && bindingTable !== undefined) this.slots.validate(bindingTable, this.device, this.name);
    const buffers = this.buffers;
    for (let i = 0; i < buffers.length; i++) {
      const buffer = buffers[i]!;
      if (buffer.state !== 'live') {
        const why = buffer.state === 'deallocated' ? 'was released by queueDealloca' : 'was destroyed';
        throw precondition(
          `${this.name}: ${describeBuffer(buffer)}, referenced directly by recorded commands, ${why}`,
        );
      }
    }
  }

  /**
   * Marks one submission (devices call it from queueExecute after validateSubmission): a one-shot
   * buffer becomes `consumed`. FAILED_PRECONDITION unless executable.
   */
  markSubmitted(): void {
    if (this.st !== EXECUTABLE) this.notSubmittable();
    if (this.mode === 'one-shot') this.st = CONSUMED;
    this.submissions++;
  }

  // ---------------------------------------------------------------------------------------------------
  // Replay

  private prepareReplay(): void {
    const constantViews: Uint32Array[] = [];
    const updateViews: Uint8Array[] = [];
    const w = this.words;
    const n = this.n;
    let p = 0;
    while (p < n) {
      switch (w[p]) {
        case Op.FILL:
          p += 6;
          break;
        case Op.UPDATE: {
          const offset = w[p + 5]!;
          updateViews.push(this.bytes.subarray(offset, offset + w[p + 3]!));
          p += 6;
          break;
        }
        case Op.COPY:
          p += 7;
          break;
        case Op.DISPATCH:
        case Op.DISPATCH_INDIRECT: {
          const count = w[p + 8]!;
          if (count > 0) constantViews.push(this.constants.subarray(w[p + 7]!, w[p + 7]! + count));
          p += 10 + 3 * w[p + 9]!;
          break;
        }
        case Op.BEGIN_DEBUG_GROUP:
          p += 2;
          break;
        default:
          p += 1;
      }
    }
    this.constantViews = constantViews;
    this.updateViews = updateViews;
    this.resolvedBindings = new ReusedBindings(this.maxBindingCount);
  }

  /**
   * Reads the ref at words[at..at+3) into rBuffer, rOffset, rLength: resolved through `table`, or,
   * when `structural`, as recorded (a slot ref as its slot index, relative offset, length or TO_END).
   */
  private resolve(at: number, table: BindingTable | undefined, structural: boolean): void {
    const w = this.words;
    const code = w[at]!;
    const offset = w[at + 1]!;
    const length = w[at + 2]!;
    if (code >= 0) {
      this.rBuffer = this.buffers[code]!;
      this.rOffset = offset;
      this.rLength = length;
      return;
    }
    const slot = slotOfCode(code);
    // A structural walk has no table, so it takes the "no binding" branch: replay's hot path (a table
    // entry present) tests nothing more than it would without replayStructure.
    const binding = table === undefined || table === null ? undefined : table[slot];
    if (binding === undefined || binding === null) {
      if (structural) {
        this.rBuffer = slot;
        this.rOffset = offset;
        this.rLength = length;
        return;
      }
      throw invalid(`${this.name}: binding slot ${slot}: no binding at replay`);
    }
    const buffer = binding.buffer;
    const base = binding.offset ?? 0;
    this.rBuffer = buffer;
    this.rOffset = base + offset;
    this.rLength = length >= 0 ? length : (binding.length ?? buffer.byteLength - base) - offset;
  }

  /**
   * Replays every command, in order, into `sink`, with each ref resolved to a buffer and an absolute
   * range: a slot ref's offset is added to its binding's offset, and an omitted length runs to the end
   * of the binding's range. Allocates nothing per command (payload views are made once, at the first
   * replay). Assumes a table that passed validateSubmission; a missing entry is still INVALID_ARGUMENT,
   * never a TypeError. FAILED_PRECONDITION before end(). Errors thrown by the sink propagate.
   */
  replay(sink: CommandSink, bindingTable?: BindingTable): void {
    if (this.st !== EXECUTABLE && this.st !== CONSUMED) {
      throw precondition(`${this.name}: replay() called in state '${this.state}'; call end() first`);
    }
    // A CommandSink is a StructureSink that only ever receives buffers: with `structural` false every
    // ref is resolved to one.
    this.walk(sink as unknown as StructureSink, bindingTable, false);
  }

  /**
   * Replays every command, in order, into `sink` with refs as recorded (see hal's StructureSink): a
   * direct ref as its buffer and absolute range; a slot ref as its slot index, its offset relative to
   * the binding's and its length, or TO_END when it was recorded without one (fill targets, dispatch
   * bindings). Needs no binding table and validates nothing; allocates nothing per command. A device
   * builds its own plan from it once (`devicePlan`). FAILED_PRECONDITION before end(). Errors thrown by
   * the sink propagate.
   */
  replayStructure(sink: StructureSink): void {
    if (this.st !== EXECUTABLE && this.st !== CONSUMED) {
      throw precondition(`${this.name}: replayStructure() called in state '${this.state}'; call end() first`);
    }
    this.walk(sink, undefined, true);
  }

  /** The one walk over the opcode stream behind `replay` and `replayStructure`. */
  private walk(sink: StructureSink, bindingTable: BindingTable | undefined, structural: boolean): void {
    if (this.resolvedBindings === undefined) this.prepareReplay();
    const rb = this.resolvedBindings!;
    const constantViews = this.constantViews!;
    const updateViews = this.updateViews!;
    const executables = this.executables;
    const labels = this.labels;
    const w = this.words;
    const n = this.n;
    let p = 0;
    try {
      while (p < n) {
        switch (w[p]) {
          case Op.FILL:
            this.resolve(p + 1, bindingTable, structural);
            sink.fill(this.rBuffer!, this.rOffset, this.rLength, w[p + 4]!, w[p + 5] as 1 | 2 | 4);
            p += 6;
            break;
          case Op.UPDATE:
            this.resolve(p + 1, bindingTable, structural);
            sink.update(updateViews[w[p + 4]!]!, this.rBuffer!, this.rOffset, this.rLength);
            p += 6;
            break;
          case Op.COPY: {
            this.resolve(p + 1, bindingTable, structural);
            const source = this.rBuffer!;
            const sourceOffset = this.rOffset;
            this.resolve(p + 4, bindingTable, structural);
            sink.copy(source, sourceOffset, this.rBuffer!, this.rOffset, this.rLength);
            p += 7;
            break;
          }
          case Op.DISPATCH:
          case Op.DISPATCH_INDIRECT: {
            const executable = executables[w[p + 1]!]!;
            const entry = w[p + 2]!;
            const ci = w[p + 6]!;
            const constants = ci < 0 ? EMPTY_CONSTANTS : constantViews[ci]!;
            const count = w[p + 9]!;
            let at = p + 10;
            for (let i = 0; i < count; i++) {
              this.resolve(at, bindingTable, structural);
              rb.slots[i] = this.rBuffer;
              rb.offsets[i] = this.rOffset;
              rb.lengths[i] = this.rLength;
              at += 3;
            }
            rb.count = count;
            const bindings = rb as StructureBindings;
            if (w[p] === Op.DISPATCH) {
              sink.dispatch(executable, entry, w[p + 3]!, w[p + 4]!, w[p + 5]!, constants, bindings);
            } else {
              this.resolve(p + 3, bindingTable, structural);
              sink.dispatchIndirect(executable, entry, this.rBuffer!, this.rOffset, constants, bindings);
            }
            p = at;
            break;
          }
          case Op.BARRIER:
            sink.barrier();
            p += 1;
            break;
          case Op.BEGIN_DEBUG_GROUP:
            sink.beginDebugGroup(labels[w[p + 1]!]!);
            p += 2;
            break;
          case Op.END_DEBUG_GROUP:
            sink.endDebugGroup();
            p += 1;
            break;
          default:
            throw new KeelError(ErrorCode.INTERNAL, `${this.name}: corrupt opcode ${w[p]} at word ${p}`);
        }
      }
    } finally {
      // Do not keep the table's buffers reachable through the reused objects after replay.
      this.rBuffer = undefined;
      rb.slots.fill(undefined);
      rb.count = 0;
    }
  }

  /**
   * The device-owned plan cached under `key` (a device or any object it owns; held weakly), built by
   * `build(this)` on first request. If `build` throws nothing is cached. FAILED_PRECONDITION before
   * end(); INVALID_ARGUMENT when `key` is not an object.
   */
  devicePlan<T>(key: object, build: (commandBuffer: CommandBuffer) => T): T {
    if (this.st !== EXECUTABLE && this.st !== CONSUMED) {
      throw precondition(`${this.name}: devicePlan() called in state '${this.state}'; call end() first`);
    }
    if (key === null || (typeof key !== 'object' && typeof key !== 'function')) {
      throw invalid(`${this.name}: devicePlan key must be an object, got ${describeValue(key)}`);
    }
    if (this.plans === undefined) this.plans = new WeakMap();
    if (this.plans.has(key)) return this.plans.get(key) as T;
    const plan = build(this);
    this.plans.set(key, plan);
    return plan;
  }
}
