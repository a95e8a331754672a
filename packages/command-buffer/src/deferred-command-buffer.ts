/**
 * The deferred command buffer (IREE's iree_hal_deferred_command_buffer_t), the public class that
 * composes one concept per file:
 *
 * - ./recorder: the lifecycle state machine, record-time checks (direct refs fully, slot refs as far as
 *   possible without a table), per-slot requirement accumulation, and writing the recorded form;
 * - ./recorded-commands and ./opcodes: the recorded form, a compact typed-array opcode stream;
 * - ./submission-validation: `validateSubmission` in O(slots used + distinct direct buffers);
 * - ./replayer: `replay` into a hal CommandSink with slot refs resolved through a binding table, and
 *   `replayStructure` into a CommandSink<StructureRef> with refs as recorded, for devices' own plans.
 *
 * This class owns the options, the one-shot `consumed` transition, the submission count and the device
 * plan cache, and checks the state before submission and replay.
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
  type BufferRef,
  type CommandBuffer,
  type CommandBufferMode,
  type CommandBufferOptions,
  type CommandBufferState,
  type CommandSink,
  checkOptions,
  type Device,
  type DispatchConfig,
  describeValue,
  type Executable,
  type OptionRules,
  QueueAffinity,
  type StructureRef,
} from '@keel/hal';
import { invalid } from '@keel/hal/driver';
import { CONSUMED, EXECUTABLE, precondition } from './lifecycle';
import { CommandRecorder } from './recorder';
import { Replayer } from './replayer';
import type { SlotRequirement } from './slot-requirements';
import { notSubmittable, validateSubmission } from './submission-validation';

const DEFAULT_MAX_UPDATE_SIZE = 65536;

/** Options of createCommandBuffer (unknown keys and wrong types are INVALID_ARGUMENT). */
const OPTION_RULES: OptionRules = {
  mode: { type: 'string', oneOf: ['one-shot', 'reusable'] },
  bindingCapacity: { type: 'integer', min: 0, max: 0x7fffffff },
  affinity: { type: 'custom', expected: 'a 32-bit integer queue mask', check: QueueAffinity.isValid },
  validation: { type: 'boolean' },
  label: { type: 'string' },
};

export class DeferredCommandBuffer implements CommandBuffer {
  readonly device: Device;
  readonly mode: CommandBufferMode;
  readonly bindingCapacity: number;
  readonly affinity: QueueAffinity;
  readonly validation: boolean;
  readonly label: string | undefined;
  /** "command buffer 'label'" (or "command buffer"): how error messages name this command buffer. */
  readonly name: string;

  private readonly recorder: CommandRecorder;
  private readonly replayer: Replayer;
  private submissions = 0;
  private plans: WeakMap<object, unknown> | undefined;

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
    const align = limits.minStorageBufferOffsetAlignment;
    this.recorder = new CommandRecorder({
      device,
      name: this.name,
      bindingCapacity: capacity,
      validation: this.validation,
      maxUpdateSize: limits.maxUpdateSize ?? DEFAULT_MAX_UPDATE_SIZE,
      maxWorkgroupCount: limits.maxWorkgroupCount,
      storageAlignment: Number.isInteger(align) && align >= 1 ? align : 1,
    });
    this.replayer = new Replayer(this.recorder.rec, this.name);
  }

  get state(): CommandBufferState {
    return this.recorder.state;
  }

  get commandCount(): number {
    return this.recorder.commands;
  }

  /** Times `markSubmitted` was called. */
  get submissionCount(): number {
    return this.submissions;
  }

  /** Words in the opcode stream plus bytes of payload arenas: the recorded form's size, in bytes. */
  get recordedBytes(): number {
    return this.recorder.rec.byteSize;
  }

  /**
   * The accumulated requirements of every binding-table slot the commands use, in first-use order.
   * Empty when validation is off (requirements are then not tracked).
   */
  slotRequirements(): SlotRequirement[] {
    return this.recorder.slots.toArray();
  }

  // ---------------------------------------------------------------------------------------------------
  // Recording (./recorder)

  /** initial → recording. FAILED_PRECONDITION in any other state: a command buffer is recorded once. */
  begin(): void {
    this.recorder.begin();
  }

  /**
   * recording → executable. FAILED_PRECONDITION outside recording or while debug groups are open (the
   * buffer then stays in recording).
   */
  end(): void {
    this.recorder.end();
  }

  /**
   * Fills `target` with `pattern` repeated. Validation: `patternLength` is 1, 2 or 4; `pattern` is an
   * unsigned integer that fits in `patternLength` bytes; the target's offset and length are multiples
   * of `patternLength`; TRANSFER_TARGET usage. A slot ref without a length fills to the end of the
   * slot's range (whose length must then be a multiple of `patternLength`, checked per submission).
   */
  fill(target: BufferRef, pattern: number, patternLength: 1 | 2 | 4): void {
    this.recorder.fill(target, pattern, patternLength);
  }

  /**
   * Copies the bytes of `source` into the command buffer now; they are written to `target` when the
   * command runs (later changes to `source` do not matter). Validation: at most the device's
   * maxUpdateSize (64 KiB) bytes; offset and size multiples of 4; a given target length equals the
   * source's size; TRANSFER_TARGET usage. `source` must be an ArrayBufferView (always checked).
   */
  update(source: ArrayBufferView, target: BufferRef): void {
    this.recorder.update(source, target);
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
    this.recorder.copy(source, target);
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
    this.recorder.dispatch(executable, entry, config);
  }

  /** Every command before the barrier completes before any command after it starts. */
  barrier(): void {
    this.recorder.barrier();
  }

  /** Opens a debug group; groups nest and must be closed before end(). */
  beginDebugGroup(label: string): void {
    this.recorder.beginDebugGroup(label);
  }

  /** Closes the innermost debug group; FAILED_PRECONDITION when none is open. */
  endDebugGroup(): void {
    this.recorder.endDebugGroup();
  }

  // ---------------------------------------------------------------------------------------------------
  // Submission (./submission-validation)

  /**
   * Validates a submission in O(slots used + distinct direct buffers):
   * - state: executable (FAILED_PRECONDITION; a consumed one-shot buffer: "cannot be submitted twice");
   * - when any slot is used: a table is given and has an entry for the highest slot (INVALID_ARGUMENT);
   * - with validation on, each used slot: see validateSlots in ./submission-validation (entry present, buffer of this
   *   device, live, usage, range, alignment), and every directly referenced buffer is still live.
   * With validation off only the state and the table's length are checked.
   */
  validateSubmission(bindingTable?: BindingTable): void {
    validateSubmission(this.recorder, bindingTable);
  }

  /**
   * Marks one submission (devices call it from queueExecute after validateSubmission): a one-shot
   * buffer becomes `consumed`. FAILED_PRECONDITION unless executable.
   */
  markSubmitted(): void {
    const r = this.recorder;
    if (r.st !== EXECUTABLE) notSubmittable(r.st, this.name);
    if (this.mode === 'one-shot') r.st = CONSUMED;
    this.submissions++;
  }

  // ---------------------------------------------------------------------------------------------------
  // Replay (./replayer)

  private checkReplayable(what: string): void {
    const st = this.recorder.st;
    if (st !== EXECUTABLE && st !== CONSUMED) {
      throw precondition(`${this.name}: ${what}() called in state '${this.state}'; call end() first`);
    }
  }

  /**
   * Replays every command, in order, into `sink`, with each ref resolved to a buffer and an absolute
   * range: a slot ref's offset is added to its binding's offset, and an omitted length runs to the end
   * of the binding's range. Allocates nothing per command (payload views are made once, at the first
   * replay). Assumes a table that passed validateSubmission; a missing entry is still INVALID_ARGUMENT,
   * never a TypeError. FAILED_PRECONDITION before end(). Errors thrown by the sink propagate.
   */
  replay(sink: CommandSink, bindingTable?: BindingTable): void {
    this.checkReplayable('replay');
    this.replayer.replay(sink, bindingTable);
  }

  /**
   * Replays every command, in order, into `sink` with refs as recorded (see hal's CommandSink): a
   * direct ref as its buffer and absolute range; a slot ref as its slot index, its offset relative to
   * the binding's and its length, or TO_END when it was recorded without one (fill targets, dispatch
   * bindings). Needs no binding table and validates nothing; allocates nothing per command. A device
   * builds its own plan from it once (`devicePlan`). FAILED_PRECONDITION before end(). Errors thrown by
   * the sink propagate.
   */
  replayStructure(sink: CommandSink<StructureRef>): void {
    this.checkReplayable('replayStructure');
    this.replayer.replayStructure(sink);
  }

  /**
   * The device-owned plan cached under `key` (a device or any object it owns; held weakly), built by
   * `build(this)` on first request. If `build` throws nothing is cached. FAILED_PRECONDITION before
   * end(); INVALID_ARGUMENT when `key` is not an object.
   */
  devicePlan<T>(key: object, build: (commandBuffer: CommandBuffer) => T): T {
    this.checkReplayable('devicePlan');
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
