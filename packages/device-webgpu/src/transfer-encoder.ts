/**
 * Encodes fills, copies and staged writes into the submission being built, choosing WebGPU's own
 * commands where they apply and the built-in kernels (builtin-kernels.ts) elsewhere:
 *
 * - fill: `clearBuffer` for a zero pattern on a 4-byte aligned range, else the `fill` kernel;
 * - copy: `copyBufferToBuffer` for 4-byte aligned ranges of two GPUBuffers; within one GPUBuffer
 *   (pooled buffers share slabs) through the scratch buffer; unaligned ranges with the `copy` kernel;
 * - update (staged): the bytes go into the uniform ring's mirror (uploaded before the submit) and are
 *   copied from the ring in command order, so they keep their place between the other commands
 *   (`queue.writeBuffer` would run before the whole submission);
 * - write from a staging region (queueWrite, write-staging.ts): `copyBufferToBuffer` for 4-byte aligned
 *   ranges, else staging → scratch buffer → `copy` kernel (the staging buffer is not bound as storage).
 *
 * Kernel work is split into chunks that fit WebGPU's storage binding size limit, and binds memory in
 * large windows so bind groups are shared. Offsets are absolute byte offsets into the GPU memory.
 */
import { growTypedArray } from '@keel/hal/driver';
import type { BindingLayout } from './binding-layouts';
import type { BuiltinKernels } from './builtin-kernels';
import { BUILTIN_PARAMS_BYTES, BUILTIN_WORKGROUP_SIZE } from './builtin-kernels';
import type { GpuEncoding } from './gpu-encoding';
import type { ErrorScopes } from './gpu-errors';
import { alignUp, type GpuMemory } from './gpu-memory';
import type { GpuScratch } from './gpu-scratch';
import type { UniformRing } from './uniform-ring';

/** Largest chunk a scratch detour of a copy takes at once. */
const SCRATCH_CHUNK = 64 * 1024 * 1024;

/** The pattern of a 1-, 2- or 4-byte fill replicated to 32 bits (little-endian byte order). */
export function replicatePattern(pattern: number, patternLength: number): number {
  if (patternLength === 1) return ((pattern & 0xff) * 0x01010101) >>> 0;
  if (patternLength === 2) return ((pattern & 0xffff) | ((pattern & 0xffff) << 16)) >>> 0;
  return pattern >>> 0;
}

export class TransferEncoder {
  readonly #device: GPUDevice;
  readonly #encoding: GpuEncoding;
  readonly #ring: UniformRing;
  readonly #kernels: BuiltinKernels;
  readonly #scratch: GpuScratch;
  readonly #scopes: ErrorScopes;
  /** The device's maxComputeWorkgroupsPerDimension. */
  readonly #maxWorkgroups: number;

  /**
   * Kernels bind memory in windows: window k binds bytes [k·W, k·W + 2W) (clamped to the memory), so
   * every chunk of at most W bytes starting in window k fits, and all kernel work on one GPUBuffer
   * shares a handful of bind groups (cached like any other) instead of one per range.
   */
  readonly #window: number;
  /** Host bytes of an update that goes through a copy (unaligned, or over a SharedArrayBuffer); kept. */
  #host = new Uint8Array(256);

  constructor(
    device: GPUDevice,
    encoding: GpuEncoding,
    ring: UniformRing,
    kernels: BuiltinKernels,
    scratch: GpuScratch,
    scopes: ErrorScopes,
  ) {
    this.#device = device;
    this.#scopes = scopes;
    this.#encoding = encoding;
    this.#ring = ring;
    this.#kernels = kernels;
    this.#scratch = scratch;
    this.#maxWorkgroups = device.limits.maxComputeWorkgroupsPerDimension;
    let window = 256;
    const max = Math.min(device.limits.maxStorageBufferBindingSize, 2 ** 31);
    while (window * 4 <= max && window < 2 ** 30) window *= 2;
    this.#window = window;
  }

  /** Binds `memory`'s window for absolute `offset` at binding `i` of `layout`; returns the window start. */
  #bindWindow(layout: BindingLayout, i: number, memory: GpuMemory, offset: number): number {
    const w = this.#window;
    const start = Math.floor(offset / w) * w;
    layout.setBinding(i, memory, start, Math.min(2 * w, memory.size - start));
    return start;
  }

  /** Fills `length` bytes at `offset` with `pattern` (1, 2 or 4 bytes, replicated). */
  fill(memory: GpuMemory, offset: number, length: number, pattern: number, patternLength: number): void {
    if (length <= 0) return;
    const word = replicatePattern(pattern, patternLength);
    if (word === 0 && (offset & 3) === 0 && (length & 3) === 0) {
      this.#encoding.encoder.clearBuffer(memory.buffer, offset, length);
      return;
    }
    const kernels = this.#kernels;
    const layout = kernels.fillBindings;
    while (length > 0) {
      const n = Math.min(length, this.#window);
      const bindStart = this.#bindWindow(layout, 0, memory, offset);
      const group = layout.bindGroup(this.#device);
      const start = offset - bindStart;
      const end = start + n;
      const firstWord = start >>> 2;
      const wordCount = ((end + 3) >>> 2) - firstWord;
      // fill's parameters: first_word, word_count, start, end, pattern
      this.#dispatch(kernels.fill, group, wordCount, firstWord, wordCount, start, end, word);
      offset += n;
      length -= n;
    }
  }

  /**
   * Sets pipeline, bindings and parameters and dispatches one built-in kernel over `wordCount` words.
   * `a`..`e` are the kernel's first five parameters in its order; the sixth (row_words) is set here.
   */
  #dispatch(
    pipeline: GPUComputePipeline,
    group: GPUBindGroup,
    wordCount: number,
    a: number,
    b: number,
    c: number,
    d: number,
    e: number,
  ): void {
    const ring = this.#ring;
    const at = ring.reserve(BUILTIN_PARAMS_BYTES);
    const m = ring.mirror;
    const i = at >>> 2;
    const groups = Math.ceil(wordCount / BUILTIN_WORKGROUP_SIZE);
    const x = Math.min(groups, this.#maxWorkgroups);
    const y = Math.ceil(groups / x);
    m[i] = a;
    m[i + 1] = b;
    m[i + 2] = c;
    m[i + 3] = d;
    m[i + 4] = e;
    m[i + 5] = x * BUILTIN_WORKGROUP_SIZE;
    const pass = this.#encoding.bind(pipeline, group);
    this.#encoding.constants(ring.bindGroup, at);
    pass.dispatchWorkgroups(x, y, 1);
  }

  /** Copies `length` bytes; the ranges must not overlap. */
  copy(
    source: GpuMemory,
    sourceOffset: number,
    target: GpuMemory,
    targetOffset: number,
    length: number,
  ): void {
    if (length <= 0) return;
    const aligned = ((sourceOffset | targetOffset | length) & 3) === 0;
    if (source.id !== target.id) {
      if (aligned)
        this.#encoding.encoder.copyBufferToBuffer(
          source.buffer,
          sourceOffset,
          target.buffer,
          targetOffset,
          length,
        );
      else this.#copyKernel(source, sourceOffset, target, targetOffset, length);
      return;
    }
    // One GPUBuffer: detour through the scratch buffer, keeping the source's byte phase.
    while (length > 0) {
      const n = Math.min(length, SCRATCH_CHUNK);
      const phase = sourceOffset & 3;
      const staged = alignUp(phase + n, 4);
      const scratch = this.#scratch.ensure(staged);
      this.#encoding.encoder.copyBufferToBuffer(
        source.buffer,
        sourceOffset - phase,
        scratch.buffer,
        0,
        staged,
      );
      if (aligned)
        this.#encoding.encoder.copyBufferToBuffer(scratch.buffer, 0, target.buffer, targetOffset, n);
      else this.#copyKernel(scratch, phase, target, targetOffset, n);
      sourceOffset += n;
      targetOffset += n;
      length -= n;
    }
  }

  #copyKernel(
    source: GpuMemory,
    sourceOffset: number,
    target: GpuMemory,
    targetOffset: number,
    length: number,
  ): void {
    const kernels = this.#kernels;
    const layout = kernels.copyBindings;
    while (length > 0) {
      const n = Math.min(length, this.#window);
      const srcStart = sourceOffset - this.#bindWindow(layout, 0, source, sourceOffset);
      const dstStart = targetOffset - this.#bindWindow(layout, 1, target, targetOffset);
      const group = layout.bindGroup(this.#device);
      const firstWord = dstStart >>> 2;
      const wordCount = ((dstStart + n + 3) >>> 2) - firstWord;
      // copy's parameters: src_start, dst_start, length, first_word, word_count
      this.#dispatch(kernels.copy, group, wordCount, srcStart, dstStart, n, firstWord, wordCount);
      sourceOffset += n;
      targetOffset += n;
      length -= n;
    }
  }

  /**
   * Writes `bytes` at `offset` of `target` in command order (staged in the uniform ring, ≤ 64 KiB
   * per call is expected).
   */
  update(bytes: Uint8Array, target: GpuMemory, offset: number): void {
    const length = bytes.byteLength;
    if (length === 0) return;
    const ring = this.#ring;
    const at = ring.reserve(alignUp((offset & 3) + length, 4)) + (offset & 3);
    ring.bytes.set(bytes, at);
    // (The ring is bound as a uniform by the kernel, so unaligned bytes go through the scratch buffer.)
    this.copyStaged(ring.buffer, at, target, offset, length);
  }

  /**
   * Copies `length` bytes held at byte `at` of `source` (a staging or ring buffer, not bindable as
   * storage) to `offset` of `target`, in command order: directly when `at`, `offset` and `length` are
   * 4-byte aligned, else through the scratch buffer and the `copy` kernel. Reads the words of `source`
   * that hold the range.
   */
  copyStaged(source: GPUBuffer, at: number, target: GpuMemory, offset: number, length: number): void {
    if (length <= 0) return;
    const encoder = this.#encoding.encoder;
    if (((at | offset | length) & 3) === 0) {
      encoder.copyBufferToBuffer(source, at, target.buffer, offset, length);
      return;
    }
    const phase = at & 3;
    const staged = alignUp(phase + length, 4);
    const scratch = this.#scratch.ensure(staged);
    encoder.copyBufferToBuffer(source, at - phase, scratch.buffer, 0, staged);
    this.#copyKernel(scratch, phase, target, offset, length);
  }

  /**
   * Writes `bytes` at `offset` of `target` ahead of the commands encoded next (queue.writeBuffer), for a
   * submission of its own (queueUpdate): aligned ranges directly, others through the scratch buffer and the kernel.
   */
  write(bytes: Uint8Array, target: GpuMemory, offset: number): void {
    const length = bytes.byteLength;
    if (length === 0) return;
    const queue = this.#device.queue;
    const aligned = ((offset | length) & 3) === 0;
    // The target may be an invalid GPUBuffer (its creation ran out of memory), and the scratch path
    // makes buffers: writeBuffer reports at once. A proven target, written directly, needs no scopes.
    if (!(aligned && target.proven)) this.#scopes.enter();
    // Dawn takes no SharedArrayBuffer: such a source goes through the kept host bytes too.
    if (aligned && bytes.buffer[Symbol.toStringTag] !== 'SharedArrayBuffer') {
      queue.writeBuffer(target.buffer, offset, bytes.buffer, bytes.byteOffset, length);
      return;
    }
    // One staging write for the whole range (two writeBuffer calls to one scratch range would both
    // land before the submission runs), then the kernel, chunked by binding size.
    const phase = offset & 3;
    const staged = alignUp(phase + length, 4);
    const host = this.#hostBytes(staged);
    host.set(bytes, phase);
    if (aligned) {
      queue.writeBuffer(target.buffer, offset, host.buffer, 0, length);
      return;
    }
    const scratch = this.#scratch.ensure(staged);
    queue.writeBuffer(scratch.buffer, 0, host.buffer, 0, staged);
    this.#copyKernel(scratch, phase, target, offset, length);
  }

  /** The kept host bytes, at least `bytes` long (grown by powers of two; `writeBuffer` copies at once). */
  #hostBytes(bytes: number): Uint8Array {
    if (this.#host.length < bytes) this.#host = growTypedArray(this.#host, 0, bytes);
    return this.#host;
  }
}
