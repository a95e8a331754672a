/**
 * `ensureOnHost(tensors)`: the one-liner for outputs (Glow's `ensureOutputsAvailable`). Issues every
 * needed readback first, then waits for all of them, so transfers of different tensors overlap.
 */
import { describeValue, ErrorCode, KeelError } from '@keel/fence';
import type { DType, TypedArrayFor } from './dtype';
import { viewAs } from './dtype';
import { prepareHostRead } from './host-access';
import { stateOf, type Tensor } from './tensor';

/**
 * Makes the host copy of every tensor up to date (one readback per stale host copy, none for the
 * others) and resolves with their host views, in order (the same views `toHost` returns). Rejects with
 * the first error (see `Tensor.toHost`); readbacks issued before an error still complete. Rejects
 * INVALID_ARGUMENT when `tensors` is not an array (or iterable) of Tensors.
 */
export async function ensureOnHost<const T extends readonly Tensor[]>(
  tensors: T,
): Promise<{ -readonly [K in keyof T]: T[K] extends Tensor<infer D> ? TypedArrayFor<D> : never }> {
  const iterable = tensors as unknown;
  if (
    typeof iterable !== 'object' ||
    iterable === null ||
    typeof (iterable as Partial<Iterable<unknown>>)[Symbol.iterator] !== 'function'
  ) {
    throw new KeelError(
      ErrorCode.INVALID_ARGUMENT,
      `ensureOnHost: tensors must be an array (or iterable) of Tensors, got ${describeValue(iterable)}`,
    );
  }
  const prepared = Array.from(tensors, (tensor, i) => {
    const state = stateOf(tensor, `ensureOnHost: tensor ${i}`);
    return { state, ...prepareHostRead(state, `ensureOnHost: tensor ${i}`) };
  });
  await Promise.all(prepared.map((p) => p.ready.wait()));
  return prepared.map(({ state, storage }) =>
    viewAs(state.dtype as DType, storage.bytes, state.elements),
  ) as never;
}
