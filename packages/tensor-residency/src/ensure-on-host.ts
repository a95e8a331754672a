/**
 * `ensureOnHost(tensors)`: the one-liner for outputs (Glow's `ensureOutputsAvailable`). Issues every
 * needed readback first, then waits for all of them, so transfers of different tensors overlap.
 */
import type { DType, TypedArrayFor } from './dtype';
import { viewAs } from './dtype';
import { prepareHostRead } from './host-access';
import { stateOf, type Tensor } from './tensor';

/**
 * Makes the host copy of every tensor up to date (one readback per stale host copy, none for the
 * others) and resolves with their host views, in order (the same views `toHost` returns). Rejects with
 * the first error (see `Tensor.toHost`); readbacks issued before an error still complete.
 */
export async function ensureOnHost<const T extends readonly Tensor[]>(
  tensors: T,
): Promise<{ -readonly [K in keyof T]: T[K] extends Tensor<infer D> ? TypedArrayFor<D> : never }> {
  const prepared = Array.from(tensors, (tensor, i) => {
    const state = stateOf(tensor, `ensureOnHost: tensor ${i}`);
    return { state, ...prepareHostRead(state, `ensureOnHost: tensor ${i}`) };
  });
  await Promise.all(prepared.map((p) => p.ready.wait()));
  return prepared.map(({ state, storage }) =>
    viewAs(state.dtype as DType, storage.bytes, state.elements),
  ) as never;
}
