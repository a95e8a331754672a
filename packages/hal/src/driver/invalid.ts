/**
 * The INVALID_ARGUMENT KeelError every device-author check throws (one helper instead of a local copy
 * per file). `message` names the object and the broken rule.
 */
import { ErrorCode, KeelError } from '@keel/fence';

/** An INVALID_ARGUMENT KeelError with `message` (and `cause` when given). */
export function invalid(message: string, cause?: unknown): KeelError {
  // An undefined cause sets no `cause` (KeelError's contract).
  return new KeelError(ErrorCode.INVALID_ARGUMENT, message, { cause });
}
