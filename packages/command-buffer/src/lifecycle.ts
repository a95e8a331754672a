/**
 * The command buffer's lifecycle states and the two error shapes its parts share. States are small
 * integers so the record hot path compares numbers: initial → begin() → recording → end() → executable;
 * a one-shot buffer becomes consumed at its submission. The recorder owns the transitions of recording;
 * DeferredCommandBuffer owns `consumed`.
 */
import { type CommandBufferState, ErrorCode, KeelError } from '@keel/hal';

export const INITIAL = 0;
export const RECORDING = 1;
export const EXECUTABLE = 2;
export const CONSUMED = 3;
export type LifecycleState = typeof INITIAL | typeof RECORDING | typeof EXECUTABLE | typeof CONSUMED;

/** The public name of each state, indexed by state. */
export const STATE_NAMES: readonly CommandBufferState[] = ['initial', 'recording', 'executable', 'consumed'];

/** A FAILED_PRECONDITION KeelError (a call in the wrong state, or a buffer no longer live). */
export function precondition(message: string): KeelError {
  return new KeelError(ErrorCode.FAILED_PRECONDITION, message);
}
