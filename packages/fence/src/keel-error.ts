/**
 * The one error class of Keel. Every failure a caller can observe (bad input, a failed semaphore, a lost
 * device, a timeout) is a KeelError with a `code` from a closed set modelled on IREE's status codes.
 * Messages name the object and the broken rule, e.g. "binding slot 3: buffer of 64 bytes is smaller
 * than the 256 bytes recorded commands use".
 */
import { describeValue } from './describe-value';

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

/**
 * The codes in a fixed order (ErrorCode's): SharedTimelineSemaphore stores a failure's code in shared
 * memory as 1 + its index here, so codes are only ever appended (internal).
 */
export const ERROR_CODES: readonly ErrorCode[] = /* @__PURE__ */ Object.values(ErrorCode);

const CODES: ReadonlySet<string> = /* @__PURE__ */ new Set(ERROR_CODES);

/**
 * A brand shared by every copy of this package loaded in one realm (Symbol.for is global), so that
 * `KeelError.is` recognises errors thrown by a duplicated copy of @keel/fence.
 */
const BRAND: unique symbol = Symbol.for('@keel/KeelError') as never;

/** True for an object whose `brand` property is `true` (the realm-wide brands of this package). */
export function branded(value: unknown, brand: symbol): boolean {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true;
}

export interface KeelErrorOptions {
  /** The underlying failure, e.g. the original error of a failed wait semaphore. */
  readonly cause?: unknown;
}

export class KeelError extends Error {
  /** The status code; one of ErrorCode. */
  declare readonly code: ErrorCode;
  readonly [BRAND] = true;

  constructor(code: ErrorCode, message: string, options?: KeelErrorOptions) {
    // Error reads only `cause` from its options; an undefined cause sets no `cause` property.
    super(message, options?.cause === undefined ? undefined : options);
    if (!CODES.has(code)) {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `KeelError: unknown code ${describeValue(code)} (the codes are ErrorCode's)`,
      );
    }
    this.code = code;
    this.name = 'KeelError';
  }

  /**
   * True for a KeelError from any copy of Keel in this realm (and, when `code` is given, only with that
   * code). Errors that crossed a thread boundary are rebuilt with `KeelError.fromStructured` first.
   */
  static is(value: unknown, code?: ErrorCode): value is KeelError {
    return branded(value, BRAND) && (code === undefined || (value as KeelError).code === code);
  }

  /**
   * A plain, structured-cloneable description of any thrown value, for passing across threads: code,
   * message and stack, and its `cause` chain (name, message, stack, code of each, at most
   * MAX_CAUSE_DEPTH deep) so that the receiving thread can rebuild the causes too.
   */
  static toStructured(error: unknown): StructuredKeelError {
    const keel = KeelError.is(error);
    if (!keel && !(error instanceof Error))
      return { code: ErrorCode.INTERNAL, message: describeThrown(error) };
    const e = error as Error;
    return withCause(
      {
        code: keel ? error.code : ErrorCode.INTERNAL,
        message: keel ? e.message : `${e.name}: ${e.message}`,
        stack: e.stack,
      },
      structuredCause(keel ? e.cause : e, 0),
    );
  }

  /**
   * Rebuilds a KeelError from `toStructured` output (the stack of the original is kept; causes come back
   * as Errors with their name, message and stack, or KeelErrors where they had a code). Never throws:
   * what is not a structured error (not an object with a string `message`) comes back as a KeelError
   * INTERNAL that says so; an unknown code as INTERNAL; a malformed cause link as an Error describing it.
   */
  static fromStructured(data: StructuredKeelError): KeelError {
    if (typeof data !== 'object' || data === null || typeof data.message !== 'string') {
      return new KeelError(
        ErrorCode.INTERNAL,
        `KeelError.fromStructured: ${describeValue(data)} is not a structured KeelError { code, message } (what KeelError.toStructured returns)`,
      );
    }
    return rebuild(data, CODES.has(data.code) ? data.code : ErrorCode.INTERNAL, 0) as KeelError;
  }
}

/** How deep `toStructured` follows a cause chain. */
// A const enum: the build writes the value in place (a top-level const stays a variable).
enum Limit {
  MAX_CAUSE_DEPTH = 4,
}

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
  try {
    return String(value);
  } catch {
    return 'an unreadable value';
  }
}

/** `data`, with `cause` added when there is one. */
function withCause<T extends object>(data: T, cause: StructuredCause | undefined): T {
  return cause ? { ...data, cause } : data;
}

function structuredCause(value: unknown, depth: number): StructuredCause | undefined {
  if (value === undefined || depth >= Limit.MAX_CAUSE_DEPTH) return undefined;
  if (!(value instanceof Error || KeelError.is(value)))
    return { name: typeof value, message: describeThrown(value) };
  const error = value as Error;
  return withCause(
    {
      name: error.name,
      message: error.message,
      stack: error.stack,
      ...(KeelError.is(value) ? { code: value.code } : {}),
    },
    structuredCause(error.cause, depth + 1),
  );
}

/**
 * A KeelError where `code` is a known code, else an Error named `data.name`; causes likewise, at most
 * MAX_CAUSE_DEPTH of them (a cyclic chain ends there). Fields of the wrong type are not copied.
 */
function rebuild(data: StructuredKeelError | StructuredCause, code: unknown, depth: number): Error {
  const link: unknown = data.cause;
  const cause =
    link === undefined || depth >= Limit.MAX_CAUSE_DEPTH ? undefined : rebuildCause(link, depth + 1);
  const options = cause && { cause };
  const message = typeof data.message === 'string' ? data.message : describeValue(data.message);
  const name: unknown = (data as StructuredCause).name;
  const error =
    typeof code === 'string' && CODES.has(code)
      ? new KeelError(code as ErrorCode, message, options)
      : Object.assign(new Error(message, options), { name: typeof name === 'string' ? name : 'Error' });
  if (typeof data.stack === 'string') error.stack = data.stack;
  return error;
}

function rebuildCause(link: unknown, depth: number): Error {
  if (typeof link !== 'object' || link === null) return new Error(describeValue(link));
  return rebuild(link as StructuredCause, (link as StructuredCause).code, depth);
}

/** The cloneable form of a KeelError. */
export interface StructuredKeelError {
  readonly code: ErrorCode;
  readonly message: string;
  readonly stack?: string | undefined;
  /** The error's cause chain, when it has one. */
  readonly cause?: StructuredCause | undefined;
}
