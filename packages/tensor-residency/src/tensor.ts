/**
 * Tensor: typed, shaped data that knows where its current bytes are — the host, one or more devices,
 * each copy with the fence that makes it ready (Glow's device-resident tensors). Data moves lazily: a
 * location is brought up to date only when something reads it there (`toHost`, a manager's `acquire`).
 *
 * Host memory: allocated when first needed (a tensor produced on a device has none until it is read
 * back), rounded up to a multiple of 4 bytes (`storageBytes`) so that every transfer is 4-byte aligned.
 * A tensor made by `ResidencyManager.createPinned` keeps its host bytes in the device's staging memory.
 *
 * Ownership: device memory is freed by `release()` (or by eviction); a tensor dropped without
 * `release()` keeps its device copies until its managers are disposed.
 */
import { describeValue, ErrorCode, KeelError } from '@keel/fence';
import {
  bytesPerElement,
  checkDType,
  type DType,
  dtypeOfView,
  type TypedArrayFor,
  viewAs,
  viewName,
} from './dtype';
import { commitHostWrite, dropStorage, prepareHostRead, storageForHostWrite } from './host-access';
import { HostStorage, plainStorage } from './host-storage';
import type { TensorRecovery } from './mirror-policy';
import type { ResidencyManager } from './residency-manager';
import { checkShape, type Shape } from './shape';
import { TensorState } from './tensor-state';

/** Options of the tensor constructors. */
export interface TensorOptions {
  /** A name used in error messages and buffer labels. */
  readonly label?: string;
}

/** Options of `Tensor.fromHost`. */
export interface FromHostOptions extends TensorOptions {
  /**
   * Copy `data` instead of adopting it (default false: a typed array of the tensor's dtype whose byte
   * length is a multiple of 4 becomes the host storage itself; anything else is copied).
   */
  readonly copy?: boolean;
}

/** Host data a tensor of dtype D accepts: its typed array, or plain numbers. */
export type HostData<D extends DType> = TypedArrayFor<D> | readonly number[];

const STATES = new WeakMap<object, TensorState>();

/** The state behind `tensor`; INVALID_ARGUMENT when it is not a Tensor (internal). */
export function stateOf(tensor: unknown, what: string): TensorState {
  const state = typeof tensor === 'object' && tensor !== null ? STATES.get(tensor) : undefined;
  if (state === undefined) throw new KeelError(ErrorCode.INVALID_ARGUMENT, `${what}: not a Tensor`);
  return state;
}

/** Validates dtype, shape and label and returns a fresh state (internal). */
export function newState(dtype: unknown, shape: unknown, options: TensorOptions | undefined, what: string) {
  const d = checkDType(dtype, what);
  const s = checkShape(shape, what);
  const label = options?.label;
  if (label !== undefined && typeof label !== 'string') {
    throw new KeelError(ErrorCode.INVALID_ARGUMENT, `${what}: label must be a string`);
  }
  const byteLength = s.elements * bytesPerElement(d);
  const storageBytes = Math.ceil(byteLength / 4) * 4;
  return new TensorState(d, s.shape, s.elements, byteLength, storageBytes, label);
}

/** Wraps a state in a Tensor (internal: managers use it for pinned tensors). */
export function tensorOf<D extends DType>(state: TensorState): Tensor<D> {
  return new (Tensor as unknown as new (state: TensorState) => Tensor<D>)(state);
}

/** Range of the integer dtypes (a plain array's elements must be integers in it). */
const INTEGER_RANGES: { readonly [D in DType]?: readonly [number, number] } = {
  i32: [-(2 ** 31), 2 ** 31 - 1],
  u32: [0, 2 ** 32 - 1],
  i16: [-(2 ** 15), 2 ** 15 - 1],
  u16: [0, 2 ** 16 - 1],
  i8: [-128, 127],
  u8: [0, 255],
};

/**
 * INVALID_ARGUMENT unless every element of plain array `data` is a number the dtype holds exactly as
 * given: every number for f32/f64 (NaN and ±Infinity included; f32 rounds), an integer in range for the
 * integer dtypes (no silent truncation or wrap-around). Names the index and shows the value.
 */
function checkElements(state: TensorState, data: readonly unknown[], what: string): void {
  const range = INTEGER_RANGES[state.dtype];
  for (let i = 0; i < data.length; i++) {
    const value = data[i];
    if (typeof value !== 'number') {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `${what}: element ${i} of the data for ${state.describe()} must be a number, got ${describeValue(value)}`,
      );
    }
    if (range !== undefined && (!Number.isInteger(value) || value < range[0] || value > range[1])) {
      throw new KeelError(
        ErrorCode.INVALID_ARGUMENT,
        `${what}: element ${i} of the data for ${state.describe()} must be an integer in [${range[0]}, ${range[1]}] (${state.dtype}), got ${describeValue(value)}`,
      );
    }
  }
}

function checkData(state: TensorState, data: unknown, what: string): void {
  const got = dtypeOfView(data);
  if (got === undefined && !Array.isArray(data)) {
    throw new KeelError(
      ErrorCode.INVALID_ARGUMENT,
      `${what}: data for ${state.describe()} must be a ${viewName(state.dtype)} or an array of numbers, got ${describeValue(data)}`,
    );
  }
  if (got !== undefined && got !== state.dtype) {
    throw new KeelError(
      ErrorCode.INVALID_ARGUMENT,
      `${what}: dtype mismatch: ${state.describe()} takes a ${viewName(state.dtype)}, got a ${viewName(got)}`,
    );
  }
  const length = (data as ArrayLike<number>).length;
  if (length !== state.elements) {
    throw new KeelError(
      ErrorCode.INVALID_ARGUMENT,
      `${what}: shape mismatch: ${state.describe()} has ${state.elements} elements, got ${length}`,
    );
  }
  if (got === undefined) checkElements(state, data as readonly unknown[], what);
}

export class Tensor<D extends DType = DType> {
  readonly #state: TensorState;

  private constructor(state: TensorState) {
    this.#state = state;
    STATES.set(this, state);
  }

  /** A tensor without contents: write it (host or device) before reading it (FAILED_PRECONDITION). */
  static empty<D extends DType>(dtype: D, shape: Shape, options?: TensorOptions): Tensor<D> {
    return new Tensor<D>(newState(dtype, shape, options, 'Tensor.empty'));
  }

  /** A tensor of zeros on the host. */
  static zeros<D extends DType>(dtype: D, shape: Shape, options?: TensorOptions): Tensor<D> {
    const tensor = new Tensor<D>(newState(dtype, shape, options, 'Tensor.zeros'));
    const state = tensor.#state;
    state.host.storage = plainStorage(state.storageBytes, 'Tensor.zeros', state);
    commitHostWrite(state);
    return tensor;
  }

  /**
   * A tensor whose contents are `data`, on the host. A typed array of the tensor's dtype with a byte
   * length that is a multiple of 4 is adopted (no copy) unless `options.copy`: the caller must not
   * change it afterwards except through the tensor. INVALID_ARGUMENT for a dtype or length mismatch.
   */
  static fromHost<D extends DType>(
    dtype: D,
    shape: Shape,
    data: HostData<D>,
    options?: FromHostOptions,
  ): Tensor<D> {
    const state = newState(dtype, shape, options, 'Tensor.fromHost');
    checkData(state, data, 'Tensor.fromHost');
    const tensor = new Tensor<D>(state);
    const view = data as ArrayBufferView & ArrayLike<number>;
    if (options?.copy !== true && !Array.isArray(data) && view.byteLength === state.storageBytes) {
      state.host.storage = new HostStorage(new Uint8Array(view.buffer, view.byteOffset, state.storageBytes));
    } else {
      const storage = plainStorage(state.storageBytes, 'Tensor.fromHost', state);
      viewAs(state.dtype, storage.bytes, state.elements).set(data as ArrayLike<number>);
      state.host.storage = storage;
    }
    commitHostWrite(state);
    return tensor;
  }

  get dtype(): D {
    return this.#state.dtype as D;
  }
  get shape(): Shape {
    return this.#state.shape;
  }
  /** Number of elements. */
  get size(): number {
    return this.#state.elements;
  }
  /** Bytes of the contents (elements × element size). */
  get byteLength(): number {
    return this.#state.byteLength;
  }
  /** Bytes of every copy: `byteLength` rounded up to a multiple of 4 (what transfers move). */
  get storageBytes(): number {
    return this.#state.storageBytes;
  }
  get label(): string | undefined {
    return this.#state.label;
  }
  /** True once `release()` was called. */
  get released(): boolean {
    return this.#state.released;
  }
  /** The contents' version: 0 before the first write, then bumped by every write (host or device). */
  get version(): number {
    return this.#state.version;
  }
  /**
   * Set when the contents were restored from a mirror after the device holding the only up-to-date
   * copy was lost (see MirrorPolicy): which version they are and how many updates were lost. Cleared
   * by the next write (host or device). Undefined otherwise.
   */
  get recovery(): TensorRecovery | undefined {
    const r = this.#state.recovery;
    return r === undefined ? undefined : Object.freeze({ ...r });
  }
  /** True when the host storage is a device's pinned (staging) memory. */
  get isPinned(): boolean {
    return this.#state.host.storage?.pinned !== undefined;
  }
  /** True when the host copy is up to date (possibly still arriving: `toHost` waits for it). */
  get isOnHost(): boolean {
    return this.#state.isHostValid();
  }
  /** True when `manager` holds a copy that is up to date (possibly still arriving). */
  isOnDevice(manager: ResidencyManager): boolean {
    for (const [owner, copy] of this.#state.copies) {
      if (owner.manager === manager) return this.#state.isValid(copy);
    }
    return false;
  }
  /** The managers holding a copy (up to date or stale) of this tensor. */
  get locations(): readonly ResidencyManager[] {
    return [...this.#state.copies.keys()].map((owner) => owner.manager);
  }

  /**
   * Replaces the contents with `data` on the host; every device copy becomes stale. Synchronous: if a
   * queue operation still uses the host storage, the data goes to fresh storage instead (copy on
   * write). INVALID_ARGUMENT for a dtype or length mismatch; FAILED_PRECONDITION when released or while
   * a write lease is open.
   */
  write(data: HostData<D>): void {
    const state = this.#state;
    checkData(state, data, 'Tensor.write');
    const storage = storageForHostWrite(state, 'Tensor.write');
    viewAs(state.dtype, storage.bytes, state.elements).set(data as ArrayLike<number>);
    commitHostWrite(state);
  }

  /**
   * Replaces the contents in place: `fill` receives the host storage and must write every element (its
   * previous contents are unspecified). This is how pinned tensors are filled without a copy. If `fill`
   * throws, the host copy is stale (and the tensor has lost its data if no other copy is up to date).
   */
  writeWith(fill: (view: TypedArrayFor<D>) => void): void {
    const state = this.#state;
    if (typeof fill !== 'function') {
      throw new KeelError(ErrorCode.INVALID_ARGUMENT, `Tensor.writeWith: fill must be a function`);
    }
    const storage = storageForHostWrite(state, 'Tensor.writeWith');
    try {
      fill(viewAs(state.dtype as D, storage.bytes, state.elements));
    } catch (error) {
      state.invalidateHost(
        new KeelError(
          ErrorCode.DATA_LOSS,
          `Tensor.writeWith: ${state.describe()}: the fill callback threw; the contents are lost`,
          { cause: error },
        ),
      );
      throw error;
    }
    commitHostWrite(state);
  }

  /**
   * The contents on the host. If the host copy is stale, one readback from an up-to-date device copy is
   * issued (a second call before it lands waits for the same one). The returned view aliases the host
   * storage: treat it as read-only, and copy it (`slice()`) to keep it past the next write or readback.
   * Rejects FAILED_PRECONDITION (released, open write lease, no contents), DATA_LOSS (no up-to-date copy
   * survived), UNAVAILABLE (its copy is on a lost device), ABORTED (the operation producing it failed).
   */
  async toHost(): Promise<TypedArrayFor<D>> {
    const state = this.#state;
    const { storage, ready } = prepareHostRead(state, 'Tensor.toHost');
    await ready.wait();
    return viewAs(state.dtype as D, storage.bytes, state.elements);
  }

  /**
   * Frees every device copy (each once the operations using it are done) and the host storage. Any
   * later use is FAILED_PRECONDITION. Idempotent. FAILED_PRECONDITION while a lease is open.
   */
  release(): void {
    const state = this.#state;
    if (state.released) return;
    if (state.openLeases > 0) {
      throw new KeelError(
        ErrorCode.FAILED_PRECONDITION,
        `Tensor.release: ${state.describe()} has ${state.openLeases} open lease(s); release them first`,
      );
    }
    state.released = true;
    for (const copy of [...state.copies.values()]) copy.owner.dropCopy(copy);
    state.copies.clear();
    const storage = state.host.storage;
    state.host.storage = undefined;
    if (storage !== undefined) dropStorage(storage);
  }

  [Symbol.dispose](): void {
    this.release();
  }

  toString(): string {
    return this.#state.describe();
  }
}
