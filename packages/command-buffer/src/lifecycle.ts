/**
 * The command buffer's lifecycle states and the error shapes its parts share. States are small
 * integers (a TS enum, inlined by bundlers) so the record hot path compares numbers: initial → begin()
 * → recording → end() → executable; a one-shot buffer becomes consumed at its submission. The recorder
 * owns the transitions of recording; DeferredCommandBuffer owns `consumed`.
 */
import { type CommandBufferState, ErrorCode, KeelError } from '@keel/hal';
import { invalid } from '@keel/hal/driver';

export enum State {
  INITIAL,
  RECORDING,
  EXECUTABLE,
  CONSUMED,
}

/** The public name of each state, indexed by state. */
export const STATE_NAMES: readonly CommandBufferState[] = ['initial', 'recording', 'executable', 'consumed'];

/** A FAILED_PRECONDITION KeelError (a call in the wrong state, or a buffer no longer live). */
export function precondition(message: string): KeelError {
  return new KeelError(ErrorCode.FAILED_PRECONDITION, message);
}

/** What the shared error helpers read: how messages name the command buffer. */
export interface Named {
  /** "command buffer 'step'" or "command buffer". */
  readonly name: string;
}

/** A command buffer with its state, for wrongState. */
export interface Stateful extends Named {
  readonly st: State;
}

/** INVALID_ARGUMENT "<name>: <rule>", for the command buffer `of`. */
export function fail(of: Named, rule: string): never {
  throw invalid(`${of.name}: ${rule}`);
}

/** FAILED_PRECONDITION "<name>: <call>() called in state '<state>'; <rule>". */
export function wrongState(of: Stateful, call: string, rule: string): never {
  throw precondition(`${of.name}: ${call}() called in state '${STATE_NAMES[of.st]}'; ${rule}`);
}

/** FAILED_PRECONDITION unless the recording is complete (executable or consumed); `call` names the call. */
export function checkReplayable(of: Stateful, call: string): void {
  if (of.st < State.EXECUTABLE) wrongState(of, call, 'call end() first');
}
