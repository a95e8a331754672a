/**
 * The layout of a WebGPU replay plan (see replay-plan.ts).
 *
 * `ops` holds OP_STRIDE int32 per command:
 *
 * | op | fields |
 * | --- | --- |
 * | DISPATCH | export, x, y, z, binding set, constants offset (-1: none) |
 * | DISPATCH_INDIRECT | export, params ref, -, -, binding set, constants offset |
 * | FILL | ref, pattern (raw bits), pattern length |
 * | UPDATE | ref, payload index |
 * | COPY | source ref, target ref |
 * | BEGIN_DEBUG_GROUP | label index |
 * | END_DEBUG_GROUP | |
 *
 * `refs` holds REF_STRIDE float64 per buffer reference: `[code, offset, length]`, in the driver kit's one
 * encoding (@keel/hal/driver ref-table.ts): `code` < 0 is direct buffer `buffers[-code - 1]` (offset
 * relative to the buffer, length concrete); `code` ≥ 0 is binding-table slot `code` (offset relative to
 * the slot's binding; length TO_END (-1) means to the end of the binding's range).
 */
export const PlanOp = {
  DISPATCH: 1,
  DISPATCH_INDIRECT: 2,
  FILL: 3,
  UPDATE: 4,
  COPY: 5,
  BEGIN_DEBUG_GROUP: 6,
  END_DEBUG_GROUP: 7,
} as const;

export const OP_STRIDE = 7;
/** Length of a slot ref that runs to the end of the binding's range: hal's TO_END (as replayStructure passes it). */
export { TO_END } from '@keel/hal';
export { REF_STRIDE } from '@keel/hal/driver';

/** Field offsets within an op record. */
export const F = {
  OP: 0,
  EXPORT: 1, // DISPATCH, DISPATCH_INDIRECT
  X: 2, // DISPATCH
  Y: 3, // DISPATCH
  Z: 4, // DISPATCH
  PARAMS: 2, // DISPATCH_INDIRECT: the parameters' ref
  SET: 5, // DISPATCH, DISPATCH_INDIRECT
  CONSTANTS: 6, // DISPATCH, DISPATCH_INDIRECT: byte offset in the constants block, -1 for none
  REF: 1, // FILL, UPDATE
  PATTERN: 2, // FILL
  PATTERN_LENGTH: 3, // FILL
  PAYLOAD: 2, // UPDATE: index into payloads
  SOURCE: 1, // COPY
  TARGET: 2, // COPY
  LABEL: 1, // BEGIN_DEBUG_GROUP: index into labels
} as const;
