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

export class RecordedCommands {
  /** The opcode stream; words [0, n) are recorded. */
  words = new Float64Array(256);
  n = 0;

  /** Direct buffers, indexed by a direct ref's word. */
  readonly buffers = new Interned<Buffer>();
  readonly executables = new Interned<Executable>();
  readonly labels: string[] = [];

  /** Dispatch constants arena: u32 words [0, constantsUsed). */
  constants = new Uint32Array(64);
  constantsUsed = 0;
  /** Dispatches that carry constants (the next one's constants index). */
  constantCommands = 0;
  /** Update payload arena: bytes [0, bytesUsed). */
  bytes = new Uint8Array(0);
  bytesUsed = 0;
  /** Updates recorded (the next one's update index). */
  updateCommands = 0;
  /** The most bindings any dispatch has (the size of the replayer's reused bindings object). */
  maxBindingCount = 0;

  /** Words in the stream plus bytes of payload arenas: the recorded form's size, in bytes. */
  get byteSize(): number {
    return this.n * 8 + this.constantsUsed * 4 + this.bytesUsed;
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
}
