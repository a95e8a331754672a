/**
 * The recorded form of a command buffer (IREE's deferred command list, as typed arrays): the opcode
 * stream (see ./opcodes), the side tables it indexes (direct buffers and executables, de-duplicated;
 * debug labels) and the two payload arenas (dispatch constants as u32, update bytes). The recorder is
 * its only writer; submission validation reads `buffers`; the replayer reads everything.
 *
 * Promises: no object is allocated per command (growth is amortized doubling); a buffer or executable
 * appears once in its table however many commands name it (a Map plus a last-hit cache, so a loop over
 * one buffer does no Map lookup); the form only grows, and never changes after `end()`.
 */
import type { Buffer, Executable } from '@keel/hal';
import { growTypedArray } from '@keel/hal/driver';
import type { Op } from './opcodes';

/** A de-duplicated table: `list` holds each item once; `intern` gives an item's index, adding it. */
export class Interned<T> {
  readonly list: T[] = [];
  readonly #index = new Map<T, number>();
  #last: T | undefined;
  #lastIndex = 0;

  /** The index of `item` in `list`, adding it on first use (a last-hit cache spares the Map lookup). */
  intern(item: T): number {
    if (item === this.#last) return this.#lastIndex;
    let index = this.#index.get(item);
    if (index === undefined) {
      index = this.list.push(item) - 1;
      this.#index.set(item, index);
    }
    this.#last = item;
    this.#lastIndex = index;
    return index;
  }
}

/**
 * A payload arena: elements [0, used) of `data` (grown by doubling) hold the payloads of `payloads`
 * commands, which number them 0, 1, ... (the replayer keeps one view per payload).
 */
export class Arena<T extends Uint8Array | Uint32Array> {
  used = 0;
  /** Commands that carry a payload here (the next one's payload index). */
  payloads = 0;
  constructor(public data: T) {}

  /** Appends `length` values (converted as typed arrays convert) and returns their offset. */
  put(values: ArrayLike<number>, length: number): number {
    const at = this.used;
    if (at + length > this.data.length) this.data = growTypedArray(this.data, at, at + length);
    const data = this.data;
    // A few dispatch constants copy faster in a loop than through TypedArray#set.
    if (length > 16) data.set(values, at);
    else for (let i = 0; i < length; i++) data[at + i] = values[i]!;
    this.used = at + length;
    return at;
  }
}

export class RecordedCommands {
  /** The opcode stream; words [0, n) are recorded. */
  words = new Float64Array(256);
  n = 0;
  /** Commands recorded (debug-group markers included). */
  commands = 0;

  /** Direct buffers, indexed by a direct ref's word. */
  readonly buffers = new Interned<Buffer>();
  readonly executables = new Interned<Executable>();
  readonly labels: string[] = [];

  /** Dispatch constants arena (u32; payload index = constants index). */
  readonly constants = new Arena(new Uint32Array(64));
  /** Update payload arena (bytes; payload index = update index). */
  readonly bytes = new Arena(new Uint8Array(0));
  /** The most bindings any dispatch has (the size of the replayer's reused bindings object). */
  maxBindingCount = 0;

  /** Words in the stream plus bytes of payload arenas: the recorded form's size, in bytes. */
  get byteSize(): number {
    return this.n * 8 + this.constants.used * 4 + this.bytes.used;
  }

  /**
   * Makes room for a command of `size` words and writes its `op` at word `n`; returns `n`. The caller
   * writes the operands and then advances `n`, so a command that throws halfway records nothing.
   */
  start(op: Op, size: number): number {
    const n = this.n;
    if (n + size > this.words.length) this.words = growTypedArray(this.words, n, n + size);
    this.words[n] = op;
    return n;
  }

  /** Completes the command `start` began: the stream now ends at word `end`. */
  finish(end: number): void {
    this.n = end;
    this.commands++;
  }
}
