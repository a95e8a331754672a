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

const CODES: ReadonlySet<string> = /* @__PURE__ */ new Set(/* @__PURE__ */ Object.values(ErrorCode));

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

  /**
   * A plain, structured-cloneable description of any thrown value, for passing across threads: code,
   * message and stack, and its `cause` chain (name, message, stack, code of each, at most
   * MAX_CAUSE_DEPTH deep) so that the receiving thread can rebuild the causes too.
   */
  static toStructured(error: unknown): StructuredKeelError {
    if (KeelError.is(error)) {
      const cause = structuredCause(error.cause, 0);
      return cause === undefined
        ? { code: error.code, message: error.message, stack: error.stack }
        : { code: error.code, message: error.message, stack: error.stack, cause };
    }
    const cause = structuredCause(error, 0);
    if (error instanceof Error)
      return {
        code: ErrorCode.INTERNAL,
        message: `${error.name}: ${error.message}`,
        stack: error.stack,
        ...(cause === undefined ? {} : { cause }),
      };
    return { code: ErrorCode.INTERNAL, message: describeThrown(error) };
  }

  /**
   * Rebuilds a KeelError from `toStructured` output (the stack of the original is kept; causes come back
   * as Errors with their name, message and stack, or KeelErrors where they had a code).
   */
  static fromStructured(data: StructuredKeelError): KeelError {
    const code = CODES.has(data.code) ? data.code : ErrorCode.INTERNAL;
    const cause = data.cause === undefined ? undefined : rebuildCause(data.cause);
    const error = new KeelError(code, data.message, cause === undefined ? undefined : { cause });
    if (data.stack !== undefined) error.stack = data.stack;
    return error;
  }
}

/** How deep `toStructured` follows a cause chain. */
const MAX_CAUSE_DEPTH = 4;

/** One link of a structured cause chain. */
export interface StructuredCause {
  readonly name: string;
  readonly message: string;
  readonly stack?: string | undefined;
  /** Set when the cause was a KeelError. */
  readonly code?: ErrorCode | undefined;
  readonly cause?: StructuredCause | undefined;
}

function describeThrown(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return String(value);
  } catch {
    return 'an unreadable value';
  }
}

function structuredCause(value: unknown, depth: number): StructuredCause | undefined {
  if (value === undefined || depth >= MAX_CAUSE_DEPTH) return undefined;
  if (value instanceof Error || KeelError.is(value)) {
    const error = value as Error & { code?: unknown };
    const inner = structuredCause(error.cause, depth + 1);
    return {
      name: error.name,
      message: error.message,
      stack: error.stack,
      ...(KeelError.is(value) ? { code: value.code } : {}),
      ...(inner === undefined ? {} : { cause: inner }),
    };
  }
  return { name: typeof value, message: describeThrown(value) };
}

function rebuildCause(data: StructuredCause): Error {
  const inner = data.cause === undefined ? undefined : rebuildCause(data.cause);
  const options = inner === undefined ? undefined : { cause: inner };
  let error: Error;
  if (data.code !== undefined && CODES.has(data.code)) {
    error = new KeelError(data.code, data.message, options);
  } else {
    error = new Error(data.message, options);
    error.name = data.name;
  }
  if (data.stack !== undefined) error.stack = data.stack;
  return error;
}

/** The cloneable form of a KeelError. */
export interface StructuredKeelError {
  readonly code: ErrorCode;
  readonly message: string;
  readonly stack?: string | undefined;
  /** The error's cause chain, when it has one. */
  readonly cause?: StructuredCause | undefined;
}
