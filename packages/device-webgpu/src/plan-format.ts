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
// Plain `const` numbers (not objects) so that the bundler inlines them into the replay loop.
// Op codes:
export const OP_DISPATCH = 1;
export const OP_DISPATCH_INDIRECT = 2;
export const OP_FILL = 3;
export const OP_UPDATE = 4;
export const OP_COPY = 5;
export const OP_BEGIN_DEBUG_GROUP = 6;
export const OP_END_DEBUG_GROUP = 7;

export const OP_STRIDE = 7;
/** Length of a slot ref that runs to the end of the binding's range: hal's TO_END (as replayStructure passes it). */
export { TO_END } from '@keel/hal';
export { REF_STRIDE } from '@keel/hal/driver';

// Field offsets within an op record:
export const F_OP = 0;
export const F_EXPORT = 1; // DISPATCH, DISPATCH_INDIRECT
export const F_X = 2; // DISPATCH
export const F_Y = 3; // DISPATCH
export const F_Z = 4; // DISPATCH
export const F_PARAMS = 2; // DISPATCH_INDIRECT: the parameters' ref
export const F_SET = 5; // DISPATCH, DISPATCH_INDIRECT
export const F_CONSTANTS = 6; // DISPATCH, DISPATCH_INDIRECT: byte offset in the constants block, -1 for none
export const F_REF = 1; // FILL, UPDATE
export const F_PATTERN = 2; // FILL
export const F_PATTERN_LENGTH = 3; // FILL
export const F_PAYLOAD = 2; // UPDATE: index into payloads
export const F_SOURCE = 1; // COPY
export const F_TARGET = 2; // COPY
export const F_LABEL = 1; // BEGIN_DEBUG_GROUP: index into labels
