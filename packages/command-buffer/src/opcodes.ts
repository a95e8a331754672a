/**
 * The recorded form: one opcode stream of 64-bit words (a growable Float64Array), side tables for
 * objects, and two arenas for payloads. No object is allocated per command.
 *
 * Every command is `[op, ...operands]`; all operands are numbers. A buffer reference takes three words
 * `ref, offset, length`:
 *
 * - `ref >= 0`: binding-table slot `ref`; `offset` is relative to the slot's binding offset;
 *   `length` is `TO_END` (-1) when it was omitted ("to the end of the range the slot gets").
 * - `ref < 0`: a direct ref; `buffers[-ref - 1]` (direct buffers are de-duplicated into one table);
 *   `offset` is absolute and `length` is concrete (an omitted length was resolved at record time).
 *
 * The ref word is the driver kit's one buffer-or-slot encoding (@keel/hal/driver `directCode`,
 * `isSlotCode`, `directIndex`), the same the devices' plans use.
 *
 * Layouts (word counts in parentheses):
 *
 * | op | operands |
 * | --- | --- |
 * | FILL (6) | target ref (3), pattern, patternLength |
 * | UPDATE (6) | target ref (3), update index, byte-arena offset (length = the ref's length) |
 * | COPY (7) | source ref (3), target ref (3); both refs' lengths are the (concrete) copy length |
 * | DISPATCH (10 + 3n) | executable index, export index, x, y, z, constants index, constants arena offset, constant count, n = binding count, n refs |
 * | DISPATCH_INDIRECT (10 + 3n) | executable index, export index, params ref (3), constants index, constants arena offset, constant count, n, n refs |
 * | BARRIER (1) | |
 * | BEGIN_DEBUG_GROUP (2) | label index |
 * | END_DEBUG_GROUP (1) | |
 *
 * "update index" and "constants index" number the commands that carry a payload, so the replayer can
 * keep one pre-made view per payload (created once, at the first replay) and pass it without allocating.
 * `Op` is a TS enum: bundlers inline its values.
 */
export enum Op {
  FILL = 1,
  UPDATE,
  COPY,
  DISPATCH,
  DISPATCH_INDIRECT,
  BARRIER,
  BEGIN_DEBUG_GROUP,
  END_DEBUG_GROUP,
}

/**
 * Length word of an indirect ref whose length was omitted: to the end of the slot's range. It is hal's
 * TO_END, so `replayStructure` passes length words through unchanged.
 */
export { TO_END } from '@keel/hal';
