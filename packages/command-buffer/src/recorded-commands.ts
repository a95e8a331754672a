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

export class RecordedCommands {
  /** The opcode stream; words [0, n) are recorded. */
  words = new Float64Array(256);
  n = 0;

  /** Direct buffers, indexed by a direct ref's word. */
  readonly buffers: Buffer[] = [];
  readonly executables: Executable[] = [];
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

  private readonly bufferIndex = new Map<Buffer, number>();
  private lastBuffer: Buffer | undefined;
  private lastBufferIndex = 0;
  private readonly executableIndex = new Map<Executable, number>();
  private lastExecutable: Executable | undefined;
  private lastExecutableIndex = 0;

  /** Words in the stream plus bytes of payload arenas: the recorded form's size, in bytes. */
  get byteSize(): number {
    return this.n * 8 + this.constantsUsed * 4 + this.bytesUsed;
  }

  /** Makes room for `words` more words of stream. */
  reserve(words: number): void {
    const needed = this.n + words;
    if (needed > this.words.length) this.words = growTypedArray(this.words, this.n, needed);
  }

  /** The index of `buffer` in `buffers`, adding it on first use. */
  internBuffer(buffer: Buffer): number {
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

  /** The index of `executable` in `executables`, adding it on first use. */
  internExecutable(executable: Executable): number {
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
}
