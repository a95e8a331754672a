/**
 * Tensor shapes: arrays of non-negative safe integers (an empty array is a scalar of one element).
 * Empty tensors (a dimension of 0) are refused: a tensor always has at least one element, so every
 * copy of it is a non-empty device buffer.
 */
import { describeValue, ErrorCode, KeelError } from '@keel/fence';

export type Shape = readonly number[];

/**
 * Validates `shape` and returns a frozen copy and its element count. INVALID_ARGUMENT for a non-array,
 * a dimension that is not a positive safe integer, or a product beyond Number.MAX_SAFE_INTEGER.
 */
export function checkShape(shape: unknown, what: string): { shape: Shape; elements: number } {
  if (!Array.isArray(shape)) {
    throw new KeelError(ErrorCode.INVALID_ARGUMENT, `${what}: shape must be an array of dimensions`);
  }
  let elements = 1;
  for (let i = 0; i < shape.length; i++) {
    const dim: unknown = shape[i];
    if (typeof dim !== 'number' || !Number.isSafeInteger(dim) || dim < 0) {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `${what}: dimension ${i} of shape ${describeShape(shape)} must be a non-negative integer`,
      );
    }
    if (dim === 0) {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `${what}: shape ${describeShape(shape)} has no elements; empty tensors are not supported`,
      );
    }
    elements *= dim;
    if (!Number.isSafeInteger(elements)) {
      throw new KeelError(ErrorCode.INVALID_ARGUMENT, `${what}: shape ${describeShape(shape)} is too large`);
    }
  }
  return { shape: Object.freeze([...(shape as number[])]), elements };
}

/** "[2, 3]": how messages show a shape (a dimension that is not a number as describeValue shows it). */
export function describeShape(shape: readonly unknown[]): string {
  return `[${shape.map((d) => (typeof d === 'number' ? String(d) : describeValue(d))).join(', ')}]`;
}

/** True when both shapes have the same dimensions. */
export function sameShape(a: Shape, b: Shape): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}
