/**
 * Element types of a Tensor and the typed arrays that view them on the host. Every dtype has a fixed
 * byte size; host views are little-endian typed arrays (the byte order of every Keel device).
 */
import { ErrorCode, KeelError } from '@keel/fence';

/** The element types a Tensor may have. */
export type DType = 'f32' | 'f64' | 'i32' | 'u32' | 'i16' | 'u16' | 'i8' | 'u8';

/** The host view of each dtype. */
export interface TypedArrayByDType {
  f32: Float32Array;
  f64: Float64Array;
  i32: Int32Array;
  u32: Uint32Array;
  i16: Int16Array;
  u16: Uint16Array;
  i8: Int8Array;
  u8: Uint8Array;
}

/** The typed array that views a tensor of dtype `D` on the host. */
export type TypedArrayFor<D extends DType> = TypedArrayByDType[D];

type ViewConstructor = {
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): TypedArrayByDType[DType];
  new (length: number): TypedArrayByDType[DType];
  readonly BYTES_PER_ELEMENT: number;
  readonly name: string;
};

const CONSTRUCTORS: { readonly [D in DType]: ViewConstructor } = {
  f32: Float32Array,
  f64: Float64Array,
  i32: Int32Array,
  u32: Uint32Array,
  i16: Int16Array,
  u16: Uint16Array,
  i8: Int8Array,
  u8: Uint8Array,
};

/** Every dtype, in a stable order. */
export const DTYPES: readonly DType[] = Object.freeze(Object.keys(CONSTRUCTORS) as DType[]);

/** True for a supported dtype name. */
export function isDType(value: unknown): value is DType {
  return typeof value === 'string' && Object.hasOwn(CONSTRUCTORS, value);
}

/** INVALID_ARGUMENT unless `value` is a supported dtype; `what` names the object. */
export function checkDType(value: unknown, what: string): DType {
  if (!isDType(value)) {
    throw new KeelError(
      ErrorCode.INVALID_ARGUMENT,
      `${what}: dtype ${JSON.stringify(value)} is not one of ${DTYPES.join(', ')}`,
    );
  }
  return value;
}

/** Bytes per element of `dtype`. */
export function bytesPerElement(dtype: DType): number {
  return CONSTRUCTORS[dtype].BYTES_PER_ELEMENT;
}

/** A typed view of `dtype` over `length` elements of `bytes` (which must be suitably aligned). */
export function viewAs<D extends DType>(dtype: D, bytes: Uint8Array, length: number): TypedArrayFor<D> {
  return new CONSTRUCTORS[dtype](bytes.buffer, bytes.byteOffset, length) as TypedArrayFor<D>;
}

/** The dtype whose host view `data` is, or undefined for anything else (DataView, plain arrays). */
export function dtypeOfView(data: unknown): DType | undefined {
  for (const dtype of DTYPES) if (data instanceof CONSTRUCTORS[dtype]) return dtype;
  return undefined;
}

/** The name of the typed array of `dtype`, e.g. 'Float32Array', for messages. */
export function viewName(dtype: DType): string {
  return CONSTRUCTORS[dtype].name;
}
