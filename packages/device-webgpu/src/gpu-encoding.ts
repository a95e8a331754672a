/**
 * One submission being encoded: a GPUCommandEncoder, the compute pass currently open (passes are kept
 * open across consecutive dispatches and closed only for copies, clears and debug groups), and the
 * pipeline and bind groups last set on that pass, so redundant `setPipeline`/`setBindGroup` calls are
 * skipped. The device reuses one object for every submission (encoding is synchronous); a submission
 * batch encodes several queue operations, and `mark`/`touched` tell whether the operation encoded
 * since the mark added commands.
 */
export class GpuEncoding {
  readonly #device: GPUDevice;

  #encoder: GPUCommandEncoder | undefined;
  #pass: GPUComputePassEncoder | undefined;
  #pipeline: GPUComputePipeline | undefined;
  #group0: GPUBindGroup | undefined;
  #group1: GPUBindGroup | undefined;
  #group1Offset = -1;
  /** Scratch for `setBindGroup`'s dynamic offsets (the allocation-free overload). */
  readonly #offsets = new Uint32Array(1);
  #used = false;
  #touched = false;

  constructor(device: GPUDevice) {
    this.#device = device;
  }

  /** Starts a new command encoder. */
  begin(): void {
    this.#encoder = this.#device.createCommandEncoder();
    this.#pass = undefined;
    this.#used = false;
  }

  /** Starts an operation: `touched` is false until it encodes something. */
  mark(): void {
    this.#touched = false;
  }

  /** True once anything was encoded since `mark`. */
  get touched(): boolean {
    return this.#touched;
  }

  /** True once anything was encoded since `begin` (else the submission can be skipped). */
  get used(): boolean {
    return this.#used;
  }

  /** The command encoder, with no compute pass open (one that was open is ended). */
  get encoder(): GPUCommandEncoder {
    this.#used = true;
    this.#touched = true;
    this.endPass();
    return this.#encoder as GPUCommandEncoder;
  }

  /** The open compute pass (begun if none is open). */
  get pass(): GPUComputePassEncoder {
    this.#touched = true;
    return this.#pass ?? this.#open(undefined);
  }

  /** Begins a compute pass (the open pass until `endPass`), with nothing set on it yet. */
  #open(descriptor: GPUComputePassDescriptor | undefined): GPUComputePassEncoder {
    this.#used = true;
    const pass = (this.#encoder as GPUCommandEncoder).beginComputePass(descriptor);
    this.#pass = pass;
    this.invalidate();
    return pass;
  }

  /**
   * Ends the open pass and begins one with `timestampWrites` (traces time each dispatch in its own
   * pass, gpu-profiler.ts); it is the open pass until `endPass`.
   */
  timedPass(timestampWrites: GPUComputePassTimestampWrites): GPUComputePassEncoder {
    this.#touched = true;
    this.endPass();
    return this.#open({ timestampWrites });
  }

  endPass(): void {
    this.#pass?.end();
    this.#pass = undefined;
  }

  /** Sets pipeline and group 0 on the open pass (skipping what is already set). */
  bind(pipeline: GPUComputePipeline, group0: GPUBindGroup): GPUComputePassEncoder {
    const pass = this.pass;
    if (pipeline !== this.#pipeline) {
      pass.setPipeline(pipeline);
      this.#pipeline = pipeline;
    }
    if (group0 !== this.#group0) {
      pass.setBindGroup(0, group0);
      this.#group0 = group0;
    }
    return pass;
  }

  /** Sets group 1 (the uniform ring) at `offset` on the open pass (skipped when unchanged). */
  constants(group1: GPUBindGroup, offset: number): void {
    if (group1 === this.#group1 && offset === this.#group1Offset) return;
    this.#offsets[0] = offset;
    (this.#pass as GPUComputePassEncoder).setBindGroup(1, group1, this.#offsets, 0, 1);
    this.#group1 = group1;
    this.#group1Offset = offset;
  }

  /**
   * Forgets what was set on the open pass (the next `bind`/`constants` set everything again). Callers
   * that set pipelines or bind groups on `pass` directly call this first.
   */
  invalidate(): void {
    this.#pipeline = undefined;
    this.#group0 = undefined;
    this.#group1 = undefined;
    this.#group1Offset = -1;
  }

  /** Ends the encoder and returns its command buffer; the object is ready for `begin` again. */
  finish(): GPUCommandBuffer {
    this.endPass();
    const encoder = this.#encoder as GPUCommandEncoder;
    this.#encoder = undefined;
    this.invalidate();
    return encoder.finish();
  }

  /** Drops an encoder whose encoding failed (nothing is submitted). */
  abandon(): void {
    try {
      this.#pass?.end();
    } catch {
      // The encoder is dropped anyway.
    }
    this.#pass = undefined;
    this.#encoder = undefined;
    this.invalidate();
  }
}
