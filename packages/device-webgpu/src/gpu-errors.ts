/**
 * WebGPU errors as Keel errors (README § Errors): GPUOutOfMemoryError → RESOURCE_EXHAUSTED,
 * GPUValidationError → INVALID_ARGUMENT, GPUInternalError → INTERNAL, each with the GPUError (Dawn's
 * message) as `cause`; a lost device is UNAVAILABLE. Error scopes are pushed and popped in the order
 * of ERROR_SCOPES, so what a device encodes or creates never reaches the uncaptured-error handler.
 */
import { describeValue, ErrorCode, KeelError } from '@keel/fence';
import type { TrackWork } from './pending-work';

/** An error's message (its name when that is empty), or any other value described (messages only). */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : describeValue(error);
}

/** The filters the device pushes around GPU work (popped in reverse order). */
export const ERROR_SCOPES: readonly GPUErrorFilter[] = ['internal', 'out-of-memory', 'validation'];

/**
 * A KeelError for `error` raised by `what` ("webgpu device '…' queueFill"). The code follows the
 * GPUError's class (its constructor's name). `batchSize`: the operations of the command buffer that
 * failed (above 1, the message says that WebGPU dropped them all).
 */
export function fromGpuError(error: GPUError, what: string, batchSize = 1): KeelError {
  const name = (error as { constructor?: { name?: unknown } }).constructor?.name;
  const kind = typeof name === 'string' ? name : '';
  let code: ErrorCode = ErrorCode.INVALID_ARGUMENT;
  let text = 'failed WebGPU validation';
  if (kind.includes('OutOfMemory')) {
    code = ErrorCode.RESOURCE_EXHAUSTED;
    text = 'ran out of GPU memory';
  } else if (kind.includes('Internal')) {
    code = ErrorCode.INTERNAL;
    text = 'hit an internal WebGPU error';
  }
  const others = batchSize - 1;
  const detail =
    others > 0
      ? `; it was submitted with ${others} other operation${others > 1 ? 's' : ''} in one command buffer, which WebGPU dropped whole: none of them ran`
      : '';
  return new KeelError(code, `${what}: ${text} (${error.message})${detail}`, { cause: error });
}

/** Pushes the device's error scopes (ERROR_SCOPES). */
export function pushErrorScopes(device: GPUDevice): void {
  for (let i = 0; i < ERROR_SCOPES.length; i++) device.pushErrorScope(ERROR_SCOPES[i] as GPUErrorFilter);
}

/**
 * Pops the scopes `pushErrorScopes` pushed; resolves with the first error caught, or undefined (a
 * pop that rejects, as on a lost device, counts as nothing caught). Off the hot path (allocates).
 */
export async function popErrorScopes(device: GPUDevice): Promise<GPUError | undefined> {
  const pops = ERROR_SCOPES.map(() => device.popErrorScope().catch(() => null));
  return (await Promise.all(pops)).find((error) => error !== null) ?? undefined;
}

/**
 * Runs `create` (WebGPU calls that report their errors at once: `createBuffer`, `createBindGroup`)
 * inside error scopes of its own, popped before it returns (also when it throws), so what it raises
 * reaches neither a running span nor the uncaptured-error handler. Returns its result and the pops'
 * outcome (popErrorScopes), counted by `track` (the device's pending work) when given. Off the hot
 * path (allocates): for creations, not for warm operations.
 */
export function inOwnScopes<T>(
  device: GPUDevice,
  create: () => T,
  track?: TrackWork,
): [T, Promise<GPUError | undefined>] {
  pushErrorScopes(device);
  let result: T;
  try {
    result = create();
  } catch (error) {
    void popErrorScopes(device);
    throw error;
  }
  const errors = popErrorScopes(device);
  return [result, track === undefined ? errors : track(errors)];
}

/**
 * The error scopes around the device's own WebGPU calls during a span: the encoding of one queue
 * operation, or the submit of a batch (submit-batch.ts opens and closes spans). Keel's scopes are never
 * left open across the caller's code, so a caller sharing the GPUDevice keeps its own errors and its
 * own scope stack. Encoder commands report their errors at `finish()`, inside the submit's span; calls
 * that report at once (`createBindGroup`, `createBuffer`, `queue.writeBuffer`) call `enter()` first,
 * which pushes the scopes once per span, and only when such a call happens (a warm operation usually
 * makes none). Outside a span `enter()` does nothing: that code keeps scopes of its own.
 */
export class ErrorScopes {
  readonly #device: GPUDevice;
  /** A span is running (only then does `enter` push). */
  armed = false;
  /** The running span pushed its scopes (the batcher pops them when the span ends). */
  pushed = false;

  constructor(device: GPUDevice) {
    this.#device = device;
  }

  /** Pushes the scopes (ERROR_SCOPES) for the running span unless it already did, or none runs. */
  enter(): void {
    if (this.pushed || !this.armed) return;
    pushErrorScopes(this.#device);
    this.pushed = true;
  }
}
