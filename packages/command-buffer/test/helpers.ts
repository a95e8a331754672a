import { KeelError } from '@keel/hal';
import { expect } from 'vitest';

/** Asserts that `fn` throws a KeelError with `code` and exactly `message` (or matching a RegExp). */
export function expectKeelError(fn: () => unknown, code: string, message: string | RegExp): void {
  let thrown: unknown;
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  if (thrown === undefined)
    throw new Error(`expected a KeelError ${code}: ${String(message)}; nothing was thrown`);
  expect(KeelError.is(thrown), `not a KeelError: ${String(thrown)}`).toBe(true);
  const error = thrown as KeelError;
  expect({ code: error.code, message: error.message }).toEqual({
    code,
    message: typeof message === 'string' ? message : expect.stringMatching(message),
  });
}
