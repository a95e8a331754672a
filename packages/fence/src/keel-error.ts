/**
 * The one error class of Keel. Every failure a caller can observe (bad input, a failed semaphore, a lost
 * device, a timeout) is a KeelError with a `code` from a closed set modelled on IREE's status codes.
 * Messages name the object and the broken rule, e.g. "binding slot 3: buffer of 64 bytes is smaller
 * than the 256 bytes recorded commands use".
 */

/** The closed set of error codes. */
export const ErrorCode = {
  INVALID_ARGUMENT: 'INVALID_ARGUMENT',
  OUT_OF_RANGE: 'OUT_OF_RANGE',
  FAILED_PRECONDITION: 'FAILED_PRECONDITION',
  RESOURCE_EXHAUSTED: 'RESOURCE_EXHAUSTED',
  DEADLINE_EXCEEDED: 'DEADLINE_EXCEEDED',
  ABORTED: 'ABORTED',
  CANCELLED: 'CANCELLED',
  UNAVAILABLE: 'UNAVAILABLE',
  UNIMPLEMENTED: 'UNIMPLEMENTED',
  PERMISSION_DENIED: 'PERMISSION_DENIED',
  NOT_FOUND: 'NOT_FOUND',
  INTERNAL: 'INTERNAL',
  DATA_LOSS: 'DATA_LOSS',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

const CODES: ReadonlySet<string> = new Set(Object.values(ErrorCode));

/**
 * A brand shared by every copy of this package loaded in one realm (Symbol.for is global), so that
 * `KeelError.is` recognises errors thrown by a duplicated copy of @keel/fence.
 */
const BRAND: unique symbol = Symbol.for('@keel/KeelError') as never;

export interface KeelErrorOptions {
  /** The underlying failure, e.g. the original error of a failed wait semaphore. */
  readonly cause?: unknown;
}

export class KeelError extends Error {
  /** The status code; one of ErrorCode. */
  readonly code: ErrorCode;
  readonly [BRAND] = true;

  constructor(code: ErrorCode, message: string, options?: KeelErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    if (!CODES.has(code)) throw new TypeError(`KeelError: unknown code '${String(code)}'`);
    this.code = code;
    this.name = 'KeelError';
  }

  /**
   * True for a KeelError from any copy of Keel in this realm (and, when `code` is given, only with that
   * code). Errors that crossed a thread boundary are rebuilt with `KeelError.fromStructured` first.
   */
  static is(value: unknown, code?: ErrorCode): value is KeelError {
    if (typeof value !== 'object' || value === null) return false;
    const branded = (value as { [BRAND]?: unknown })[BRAND] === true;
    if (!branded) return false;
    return code === undefined || (value as KeelError).code === code;
  }

  /** A plain, structured-cloneable description of any thrown value, for passing across threads. */
  static toStructured(error: unknown): StructuredKeelError {
    if (KeelError.is(error)) return { code: error.code, message: error.message, stack: error.stack };
    if (error instanceof Error)
      return { code: ErrorCode.INTERNAL, message: `${error.name}: ${error.message}`, stack: error.stack };
    return { code: ErrorCode.INTERNAL, message: String(error) };
  }

  /** Rebuilds a KeelError from `toStructured` output (the stack of the original is kept). */
  static fromStructured(data: StructuredKeelError): KeelError {
    const code = CODES.has(data.code) ? data.code : ErrorCode.INTERNAL;
    const error = new KeelError(code, data.message);
    if (data.stack !== undefined) error.stack = data.stack;
    return error;
  }
}

/** The cloneable form of a KeelError. */
export interface StructuredKeelError {
  readonly code: ErrorCode;
  readonly message: string;
  readonly stack?: string | undefined;
}
