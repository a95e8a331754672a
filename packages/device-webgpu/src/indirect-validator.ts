/**
 * Device-side validation of indirect dispatch parameters (as Dawn and IREE do): WebGPU silently skips
 * an indirect dispatch whose workgroup count exceeds maxComputeWorkgroupsPerDimension, so before each
 * one a one-invocation `validate_indirect` kernel reads the three counts, copies them into the
 * device's validated-parameters buffer when all are within the limit, else writes zeros there and
 * records the offending counts; the dispatch then reads its counts from that buffer. At the end of a
 * submission that had any indirect dispatch the record is copied to a readback staging buffer, which
 * the scheduler maps before the operation completes: a recorded violation fails the operation's
 * signal with OUT_OF_RANGE naming the limit (`check`).
 *
 * The validated buffer (32 bytes): words 0–2 the counts to dispatch, word 4 the violation flag,
 * words 5–7 the first offending counts. Commands of one submission run in order, so one slot serves
 * every indirect dispatch. Allocation-free once warm (bind groups come from the layouts' caches).
 */
import { ErrorCode, KeelError } from '@keel/fence';
import type { BuiltinKernels } from './builtin-kernels';
import type { GpuEncoding } from './gpu-encoding';
import { USAGE_COPY_DST, USAGE_COPY_SRC, USAGE_INDIRECT, USAGE_STORAGE } from './gpu-flags';
import { alignUp, createGpuMemory, type GpuMemory } from './gpu-memory';
import type { UniformRing } from './uniform-ring';

/** Bytes of the validated buffer, and where the violation record starts. */
const VALIDATED_BYTES = 32;
const RECORD_OFFSET = 16;
/** Bytes of the record copied to the readback staging buffer. */
export const INDIRECT_RECORD_BYTES = 16;

export class IndirectValidator {
  readonly #device: GPUDevice;
  readonly #kernels: BuiltinKernels;
  readonly #ring: UniformRing;
  readonly #storageAlignment: number;
  readonly #maxWorkgroups: number;

  readonly #memory: GpuMemory;
  /** An indirect dispatch was encoded in the current submission (its record must be read back). */
  #used = false;
  #destroyed = false;

  constructor(device: GPUDevice, kernels: BuiltinKernels, ring: UniformRing) {
    this.#device = device;
    this.#kernels = kernels;
    this.#ring = ring;
    this.#storageAlignment = Math.max(4, device.limits.minStorageBufferOffsetAlignment);
    this.#maxWorkgroups = device.limits.maxComputeWorkgroupsPerDimension;
    this.#memory = createGpuMemory(
      device,
      VALIDATED_BYTES,
      'keel indirect parameters',
      USAGE_STORAGE | USAGE_INDIRECT | USAGE_COPY_SRC | USAGE_COPY_DST,
    );
  }

  /** True once an indirect dispatch was validated in the current submission. */
  get used(): boolean {
    return this.#used;
  }

  /**
   * Encodes the validation of the 12 bytes of counts at absolute `offset` of `params`; returns the
   * GPUBuffer to dispatch from, at offset 0.
   */
  validate(encoding: GpuEncoding, params: GpuMemory, offset: number): GPUBuffer {
    const memory = this.#memory;
    if (!this.#used) {
      this.#used = true;
      encoding.encoder.clearBuffer(memory.buffer, RECORD_OFFSET, VALIDATED_BYTES - RECORD_OFFSET);
    }
    const kernels = this.#kernels;
    const layout = kernels.copyBindings;
    const start = offset - (offset % this.#storageAlignment);
    const size = Math.min(params.size - start, alignUp(offset - start + 12, 4));
    layout.setBinding(0, params, start, size);
    layout.setBinding(1, memory, 0, VALIDATED_BYTES);
    const group = layout.bindGroup(this.#device);
    const ring = this.#ring;
    const at = ring.reserve(16);
    const m = ring.mirror;
    const i = at >>> 2;
    m[i] = (offset - start) >>> 2;
    m[i + 1] = this.#maxWorkgroups;
    m[i + 2] = 0;
    m[i + 3] = 0;
    const pass = encoding.bind(kernels.validateIndirect, group);
    encoding.constants(ring.bindGroup, at);
    pass.dispatchWorkgroups(1, 1, 1);
    return memory.buffer;
  }

  /** Ends the submission's validation: copies the record to `staging` (call before finishing). */
  finish(encoder: GPUCommandEncoder, staging: GPUBuffer): void {
    this.#used = false;
    encoder.copyBufferToBuffer(this.#memory.buffer, RECORD_OFFSET, staging, 0, INDIRECT_RECORD_BYTES);
  }

  /** Forgets an abandoned submission's use. */
  abandon(): void {
    this.#used = false;
  }

  /**
   * OUT_OF_RANGE when the mapped record (`words`: flag, x, y, z) says a count exceeded the limit
   * (the dispatch was skipped); undefined otherwise. `what` names the operation.
   */
  check(words: Uint32Array, what: string): KeelError | undefined {
    if (words[0] === 0) return undefined;
    return new KeelError(
      ErrorCode.OUT_OF_RANGE,
      `${what}: an indirect dispatch's workgroup count [${words[1]}, ${words[2]}, ${words[3]}] exceeds the device's maxComputeWorkgroupsPerDimension of ${this.#maxWorkgroups}; the dispatch was skipped`,
    );
  }

  /** GPUBuffers alive (its validated buffer until `destroy`). */
  get live(): number {
    return this.#destroyed ? 0 : 1;
  }

  destroy(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    this.#memory.buffer.destroy();
  }
}
