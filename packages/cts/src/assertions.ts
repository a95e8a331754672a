/**
 * The suite's own assertions (plain throws, so the suite works with whatever test runner copy loads
 * it). Messages say what was expected and what was found.
 */
import { type ErrorCode, KeelError } from '@keel/hal';

export class CtsAssertionError extends Error {
  override readonly name = 'CtsAssertionError';
}

export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new CtsAssertionError(message);
}

export function checkEqual<T>(actual: T, expected: T, what: string): void {
  if (!Object.is(actual, expected)) {
    throw new CtsAssertionError(`${what}: expected ${String(expected)}, got ${String(actual)}`);
  }
}

/** Compares two arrays element by element; reports the first difference. */
export function checkArrayEqual(actual: ArrayLike<number>, expected: ArrayLike<number>, what: string): void {
  if (actual.length !== expected.length) {
    throw new CtsAssertionError(`${what}: expected ${expected.length} elements, got ${actual.length}`);
  }
  for (let i = 0; i < actual.length; i++) {
    if (!Object.is(actual[i], expected[i])) {
      const from = Math.max(0, i - 2);
      const show = (a: ArrayLike<number>) =>
        Array.from({ length: Math.min(6, a.length - from) }, (_, k) => a[from + k]);
      throw new CtsAssertionError(
        `${what}: element ${i} is ${actual[i]}, expected ${expected[i]} (from ${from}: got [${show(actual).join(', ')}], expected [${show(expected).join(', ')}])`,
      );
    }
  }
}

/** The error `fn` throws; fails unless it is a KeelError with `code`. */
export function expectKeelError(fn: () => unknown, code: ErrorCode, what: string): KeelError {
  let thrown: unknown;
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  if (thrown === undefined)
    throw new CtsAssertionError(`${what}: expected a KeelError ${code}, nothing was thrown`);
  if (!KeelError.is(thrown)) {
    throw new CtsAssertionError(`${what}: expected a KeelError ${code}, got ${String(thrown)}`);
  }
  if (thrown.code !== code) {
    throw new CtsAssertionError(
      `${what}: expected a KeelError ${code}, got ${thrown.code}: ${thrown.message}`,
    );
  }
  return thrown;
}

/** The rejection of `promise`; fails unless it is a KeelError with `code` (any code when omitted). */
export async function expectRejection(
  promise: Promise<unknown>,
  code: ErrorCode | undefined,
  what: string,
): Promise<KeelError> {
  let thrown: unknown;
  let resolved = false;
  try {
    await promise;
    resolved = true;
  } catch (error) {
    thrown = error;
  }
  if (resolved)
    throw new CtsAssertionError(`${what}: expected a rejection${code ? ` (${code})` : ''}, it resolved`);
  if (!KeelError.is(thrown))
    throw new CtsAssertionError(`${what}: expected a KeelError, got ${String(thrown)}`);
  if (code !== undefined && thrown.code !== code) {
    throw new CtsAssertionError(`${what}: expected ${code}, got ${thrown.code}: ${thrown.message}`);
  }
  return thrown;
}

/** True if `error` or anything on its `cause` chain is `target`. */
export function causedBy(error: unknown, target: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth++) {
    if (current === target) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
