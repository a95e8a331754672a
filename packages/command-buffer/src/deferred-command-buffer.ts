/**
 * The deferred command buffer (IREE's iree_hal_deferred_command_buffer_t), the public class, built
 * from one concept per file:
 *
 * - ./recorder, its base class (the recording methods and state are its own): the lifecycle state
 *   machine, record-time checks (direct refs fully, slot refs as far as possible without a table),
 *   per-slot requirement accumulation, and writing the recorded form;
 * - ./recorded-commands and ./opcodes: the recorded form, a compact typed-array opcode stream;
 * - ./submission-validation: `validateSubmission` in O(slots used + distinct direct buffers);
 * - ./replayer, its direct base (which extends the recorder): `replay` into a hal CommandSink with slot
 *   refs resolved through a binding table, and `replayStructure` into a CommandSink<StructureRef> with
 *   refs as recorded, for devices' own plans.
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
  type CommandBuffer,
  type CommandBufferMode,
  type CommandBufferOptions,
  checkOptions,
  type Device,
  describeValue,
  type OptionRules,
  QueueAffinity,
} from '@keel/hal';
import { checkReplayable, fail, State } from './lifecycle';
import { CommandReplayer } from './replayer';
import type { SlotRequirement } from './slot-requirements';
import { notSubmittable, validateSubmission } from './submission-validation';

/** Options of createCommandBuffer (unknown keys and wrong types are INVALID_ARGUMENT). */
const OPTION_RULES: OptionRules = {
  mode: { type: 'string', oneOf: ['one-shot', 'reusable'] },
  bindingCapacity: { type: 'integer', min: 0, max: 0x7fffffff },
  affinity: { type: 'custom', expected: 'a 32-bit integer queue mask', check: QueueAffinity.isValid },
  validation: { type: 'boolean' },
  label: { type: 'string' },
};

export class DeferredCommandBuffer extends CommandReplayer implements CommandBuffer {
  readonly mode: CommandBufferMode;
  readonly affinity: QueueAffinity;
  readonly label: string | undefined;

  #submissions = 0;
  #plans: WeakMap<object, unknown> | undefined;

  /**
   * Validates `options` with hal's checkOptions (INVALID_ARGUMENT naming the option): `mode`
   * 'one-shot' (default) or 'reusable'; `bindingCapacity` an integer in [0, 2^31) (default 0);
   * `affinity` selecting at least one of the device's queues (default ANY); `validation` (default
   * true); `label`.
   */
  constructor(device: Device, rawOptions?: CommandBufferOptions) {
    const options = checkOptions<CommandBufferOptions>('createCommandBuffer', rawOptions, OPTION_RULES);
    const label = options.label;
    super(
      device,
      label === undefined ? 'command buffer' : `command buffer '${label}'`,
      options.bindingCapacity ?? 0,
      options.validation !== false,
    );
    this.label = label;
    this.mode = options.mode ?? 'one-shot';
    const affinity = options.affinity ?? QueueAffinity.ANY;
    QueueAffinity.select(affinity, device.info.queueCount, `${this.name}: option 'affinity'`);
    this.affinity = affinity >>> 0;
  }

  get commandCount(): number {
    return this.rec.commands;
  }

  /** Times `markSubmitted` was called. */
  get submissionCount(): number {
    return this.#submissions;
  }

  /** Words in the opcode stream plus bytes of payload arenas: the recorded form's size, in bytes. */
  get recordedBytes(): number {
    return this.rec.byteSize;
  }

  /**
   * The accumulated requirements of every binding-table slot the commands use, in first-use order.
   * Empty when validation is off (requirements are then not tracked).
   */
  slotRequirements(): SlotRequirement[] {
    return this.slots.toArray();
  }

  // ---------------------------------------------------------------------------------------------------
  // Submission (./submission-validation)

  /**
   * Validates a submission in O(slots used + distinct direct buffers):
   * - state: executable (FAILED_PRECONDITION; a consumed one-shot buffer: "cannot be submitted twice");
   * - when any slot is used: a table is given and has an entry for the highest slot (INVALID_ARGUMENT);
   * - with validation on, each used slot: see ./submission-validation (entry present, buffer of this
   *   device, live, usage, range, alignment), and every directly referenced buffer is still live.
   * With validation off only the state and the table's length are checked.
   */
  validateSubmission(bindingTable?: BindingTable): void {
    validateSubmission(this, bindingTable);
  }

  /**
   * Marks one submission (devices call it from queueExecute after validateSubmission): a one-shot
   * buffer becomes `consumed`. FAILED_PRECONDITION unless executable.
   */
  markSubmitted(): void {
    if (this.st !== State.EXECUTABLE) notSubmittable(this);
    if (this.mode === 'one-shot') this.st = State.CONSUMED;
    this.#submissions++;
  }

  /**
   * The device-owned plan cached under `key` (a device or any object it owns; held weakly), built by
   * `build(this)` on first request. If `build` throws nothing is cached. FAILED_PRECONDITION before
   * end(); INVALID_ARGUMENT when `key` is not an object.
   */
  devicePlan<T>(key: object, build: (commandBuffer: CommandBuffer) => T): T {
    checkReplayable(this, 'devicePlan');
    if (key === null || (typeof key !== 'object' && typeof key !== 'function')) {
      fail(this, `devicePlan key must be an object, got ${describeValue(key)}`);
    }
    this.#plans ??= new WeakMap();
    if (this.#plans.has(key)) return this.#plans.get(key) as T;
    const plan = build(this);
    this.#plans.set(key, plan);
    return plan;
  }
}
