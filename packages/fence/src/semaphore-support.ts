/** Helpers shared by the semaphore classes (internal): labels, failure normalisation, messages. */

import { describeValue } from './describe-value';
import { ErrorCode, KeelError } from './keel-error';
import type { Semaphore } from './semaphore';
import { invalidArgument } from './validate';

export interface SemaphoreOptions {
  /** A name for error messages; by default `timeline-<n>` (or `shared-<n>`). */
  readonly label?: string | undefined;
}

let nextId = 1;

/** The label a semaphore gets: the caller's, validated, or `<prefix>-<n>`. */
export function semaphoreLabel(prefix: string, options: SemaphoreOptions | undefined): string {
  const label = options?.label;
  if (label === undefined) return `${prefix}-${nextId++}`;
  if (typeof label !== 'string') {
    throw invalidArgument(`${prefix} semaphore: label must be a string`);
  }
  return label;
}

/** Normalises what `fail` receives: a KeelError is kept as is, anything else is wrapped as INTERNAL. */
export function toFailure(label: string, error: unknown): KeelError {
  if (KeelError.is(error)) return error;
  const detail = error instanceof Error ? `${error.name}: ${error.message}` : describeValue(error);
  return new KeelError(ErrorCode.INTERNAL, `semaphore '${label}' failed: ${detail}`, { cause: error });
}

/** INVALID_ARGUMENT for `signal(value)` at payload `current`; `prefix` names an outer call. */
export function signalTooLow(label: string, value: number, current: number, prefix = ''): KeelError {
  return invalidArgument(
    `${prefix}semaphore '${label}': signal(${value}) must be greater than the current payload ${current}`,
  );
}

/** `Name(label: payload)`, or `Name(label: failed CODE)`. */
export function semaphoreString(name: string, semaphore: Semaphore): string {
  const failure = semaphore.failure;
  return `${name}(${semaphore.label}: ${failure ? `failed ${failure.code}` : semaphore.value})`;
}
