/**
 * The replayer: the replay half of a DeferredCommandBuffer (IREE's deferred command buffer replay), a
 * class between the recorder (its base) and the public class. One walk over the recorded form
 * (./recorded-commands) calls a hal CommandSink command by command, in recorded order, either with refs
 * resolved through a binding table (`replay`) or with refs as recorded (`replayStructure`: slot refs as
 * slot indices with slot-relative ranges, for devices' own plans). `replay(sink, table)` is
 * `replayStructure` with every slot ref resolved; one walk serves both.
 *
 * Promises: FAILED_PRECONDITION before `end()` (the form must be complete). Nothing is allocated per
 * command: the view of each update payload and of each dispatch's constants is made once, when its
 * command is first replayed, and one bindings object is reused for every dispatch (the sink may use
 * these only during the call); after a replay, also a failed one, no table buffer stays reachable
 * through the reused objects. Not re-entrant for one command buffer; different command buffers may
 * replay from inside a sink. Errors thrown by the sink propagate.
 */
import {
  type BindingTable,
  type Buffer,
  type CommandBindings,
  type CommandSink,
  ErrorCode,
  KeelError,
  type StructureRef,
} from '@keel/hal';
import { directIndex, invalid, isSlotCode } from '@keel/hal/driver';
import { checkReplayable } from './lifecycle';
import { Op } from './opcodes';
import { CommandRecorder } from './recorder';

const EMPTY_CONSTANTS = new Uint32Array(0);

/**
 * The one bindings object a replayer reuses for every dispatch. `buffers` holds Buffers in `replay`
 * and Buffers or slot indices in `replayStructure`; `refs` is the same array under the name hal's
 * deprecated StructureBindings gives it.
 */
interface ReusedBindings extends CommandBindings<StructureRef> {
  count: number;
  readonly refs: readonly StructureRef[];
  readonly offsets: Float64Array;
  readonly lengths: Float64Array;
}

export class CommandReplayer extends CommandRecorder {
  // The fields and method `resolve` touches per ref are plain (TS-private) properties: V8 reads
  // ES #private fields measurably slower on this hot path (~15% of replay per dispatch in Node 20).
  /** The recorded form's direct-buffer table (only grows while recording). */
  private readonly direct: readonly Buffer[] = this.rec.buffers.list;
  // Payload views by update / constants index, each made when its command is first replayed.
  readonly #updateViews: Uint8Array[] = [];
  readonly #constantViews: Uint32Array[] = [];
  // Made at the first replay: the reused bindings object and its array, writable (cleared after each
  // replay so no table buffer stays reachable).
  #bindings: ReusedBindings | undefined;
  #refs: (StructureRef | undefined)[] = [];
  // The ref `resolve` read last: its buffer (or slot index), offset and length.
  private buf: StructureRef | undefined;
  private off = 0;
  private len = 0;

  /**
   * Reads the ref at words[at..at+3) into buf, off, len: resolved through `table`, or,
   * when `structural`, as recorded (a slot ref as its slot index, relative offset, length or TO_END).
   */
  private resolve(at: number, table: BindingTable | undefined, structural: boolean): void {
    const w = this.rec.words;
    const code = w[at]!;
    const offset = w[at + 1]!;
    const length = w[at + 2]!;
    if (!isSlotCode(code)) {
      this.buf = this.direct[directIndex(code)]!;
      this.off = offset;
      this.len = length;
      return;
    }
    const slot = code;
    // A structural walk has no table, so it takes the "no binding" branch: replay's hot path (a table
    // entry present) tests nothing more than it would without replayStructure.
    const binding = table === undefined || table === null ? undefined : table[slot];
    if (binding === undefined || binding === null) {
      if (structural) {
        this.buf = slot;
        this.off = offset;
        this.len = length;
        return;
      }
      throw invalid(`${this.name}: binding slot ${slot}: no binding at replay`);
    }
    const buffer = binding.buffer;
    const base = binding.offset ?? 0;
    this.buf = buffer;
    this.off = base + offset;
    this.len = length >= 0 ? length : (binding.length ?? buffer.byteLength - base) - offset;
  }

  /**
   * Replays every command, in order, into `sink`, with each ref resolved to a buffer and an absolute
   * range: a slot ref's offset is added to its binding's offset, and an omitted length runs to the end
   * of the binding's range. Allocates nothing per command (payload views are made once, at a command's
   * first replay). Assumes a table that passed validateSubmission; a missing entry is still
   * INVALID_ARGUMENT, never a TypeError. FAILED_PRECONDITION before end(). Errors thrown by the sink
   * propagate.
   */
  replay(sink: CommandSink, bindingTable?: BindingTable): void {
    checkReplayable(this, 'replay');
    // Every ref reaches the sink as a Buffer: with `structural` false a slot ref is resolved or throws.
    this.#walk(sink, bindingTable, false);
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
    checkReplayable(this, 'replayStructure');
    this.#walk(sink, undefined, true);
  }

  /** Makes `views[index]`: `length` elements of `arena` from `at` (once per payload, at its first replay). */
  #view<T extends Uint8Array | Uint32Array>(
    views: T[],
    index: number,
    arena: T,
    at: number,
    length: number,
  ): T {
    const view = arena.subarray(at, at + length) as T;
    views[index] = view;
    return view;
  }

  /** The one walk over the opcode stream behind `replay` and `replayStructure`. */
  #walk(sink: CommandSink<StructureRef>, bindingTable: BindingTable | undefined, structural: boolean): void {
    const rec = this.rec;
    let rb = this.#bindings;
    if (rb === undefined) {
      const size = rec.maxBindingCount;
      const refs = new Array<StructureRef | undefined>(size).fill(undefined);
      this.#refs = refs;
      rb = this.#bindings = {
        count: 0,
        buffers: refs as readonly StructureRef[],
        refs: refs as readonly StructureRef[],
        offsets: new Float64Array(size),
        lengths: new Float64Array(size),
      };
    }
    const refs = this.#refs;
    const constantViews = this.#constantViews;
    const updateViews = this.#updateViews;
    const executables = rec.executables.list;
    const w = rec.words;
    const n = rec.n;
    let p = 0;
    try {
      while (p < n) {
        switch (w[p]) {
          case Op.FILL:
            this.resolve(p + 1, bindingTable, structural);
            sink.fill(this.buf!, this.off, this.len, w[p + 4]!, w[p + 5] as 1 | 2 | 4);
            p += 6;
            break;
          case Op.UPDATE: {
            this.resolve(p + 1, bindingTable, structural);
            const u = w[p + 4]!;
            const data = updateViews[u] ?? this.#view(updateViews, u, rec.bytes.data, w[p + 5]!, w[p + 3]!);
            sink.update(data, this.buf!, this.off, this.len);
            p += 6;
            break;
          }
          case Op.COPY: {
            this.resolve(p + 1, bindingTable, structural);
            const source = this.buf!;
            const sourceOffset = this.off;
            this.resolve(p + 4, bindingTable, structural);
            sink.copy(source, sourceOffset, this.buf!, this.off, this.len);
            p += 7;
            break;
          }
          case Op.DISPATCH:
          case Op.DISPATCH_INDIRECT: {
            const executable = executables[w[p + 1]!]!;
            const entry = w[p + 2]!;
            const ci = w[p + 6]!;
            const constants =
              ci < 0
                ? EMPTY_CONSTANTS
                : (constantViews[ci] ??
                  this.#view(constantViews, ci, rec.constants.data, w[p + 7]!, w[p + 8]!));
            const count = w[p + 9]!;
            let ref = p + 10;
            for (let i = 0; i < count; i++) {
              this.resolve(ref, bindingTable, structural);
              refs[i] = this.buf;
              rb.offsets[i] = this.off;
              rb.lengths[i] = this.len;
              ref += 3;
            }
            rb.count = count;
            if (w[p] === Op.DISPATCH) {
              sink.dispatch(executable, entry, w[p + 3]!, w[p + 4]!, w[p + 5]!, constants, rb);
            } else {
              this.resolve(p + 3, bindingTable, structural);
              sink.dispatchIndirect(executable, entry, this.buf!, this.off, constants, rb);
            }
            p = ref;
            break;
          }
          case Op.BARRIER:
            sink.barrier();
            p += 1;
            break;
          case Op.BEGIN_DEBUG_GROUP:
            sink.beginDebugGroup(rec.labels[w[p + 1]!]!);
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
      this.buf = undefined;
      refs.fill(undefined);
      rb.count = 0;
    }
  }
}
