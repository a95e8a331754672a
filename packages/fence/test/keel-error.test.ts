import { describe, expect, it } from 'vitest';
import { ErrorCode, KeelError } from '../src/index';

describe('KeelError', () => {
  it('carries a code, a message and a cause', () => {
    const cause = new Error('root');
    const e = new KeelError(ErrorCode.ABORTED, 'semaphore 1: failed', { cause });
    expect(e).toBeInstanceOf(Error);
    expect(e.code).toBe('ABORTED');
    expect(e.message).toBe('semaphore 1: failed');
    expect(e.cause).toBe(cause);
    expect(e.name).toBe('KeelError');
  });

  it('rejects codes outside the closed set with INVALID_ARGUMENT naming the code', () => {
    let caught: unknown;
    try {
      new KeelError('NOPE' as ErrorCode, 'x');
    } catch (error) {
      caught = error;
    }
    expect(KeelError.is(caught, ErrorCode.INVALID_ARGUMENT)).toBe(true);
    expect((caught as KeelError).message).toContain('"NOPE"');
  });

  it('fromStructured turns what is not a structured error into a KeelError INTERNAL that says so', () => {
    for (const data of [null, undefined, 5, 'text', {}, { code: 'ABORTED' }, { message: 7 }]) {
      const error = KeelError.fromStructured(data as never);
      expect(KeelError.is(error, ErrorCode.INTERNAL)).toBe(true);
      expect(error.message).toMatch(/^KeelError\.fromStructured: .* is not a structured KeelError/);
    }
  });

  it('fromStructured keeps what it can of a malformed or cyclic cause chain', () => {
    const cyclic: { code: string; message: string; cause?: unknown } = { code: 'ABORTED', message: 'loop' };
    cyclic.cause = cyclic;
    const error = KeelError.fromStructured(cyclic as never);
    expect(KeelError.is(error, ErrorCode.ABORTED)).toBe(true);
    let depth = 0;
    for (let e: unknown = error.cause; e instanceof Error; e = e.cause) depth++;
    expect(depth).toBe(4);
    const odd = KeelError.fromStructured({ code: 'DATA_LOSS', message: 'm', stack: 5, cause: 'x' } as never);
    expect(odd.code).toBe('DATA_LOSS');
    expect(odd.message).toBe('m');
    expect(odd.stack).not.toBe(5);
    expect((odd.cause as Error).message).toBe('"x"');
    // An unknown code (a newer copy's) is still INTERNAL with the message kept.
    expect(KeelError.fromStructured({ code: 'NEWER' as never, message: 'kept' }).message).toBe('kept');
  });

  it('is() recognises errors of a duplicated copy through the global brand', () => {
    const foreign = Object.assign(new Error('from another copy'), {
      code: 'NOT_FOUND',
      [Symbol.for('@keel/KeelError')]: true,
    });
    expect(KeelError.is(foreign)).toBe(true);
    expect(KeelError.is(foreign, ErrorCode.NOT_FOUND)).toBe(true);
    expect(KeelError.is(foreign, ErrorCode.INTERNAL)).toBe(false);
    expect(KeelError.is(new Error('plain'))).toBe(false);
    expect(KeelError.is(null)).toBe(false);
  });

  it('round-trips through its structured form', () => {
    const e = KeelError.fromStructured(KeelError.toStructured(new KeelError('DATA_LOSS', 'x')));
    expect(KeelError.is(e, 'DATA_LOSS')).toBe(true);
    expect(KeelError.toStructured(new RangeError('r')).code).toBe('INTERNAL');
    expect(KeelError.toStructured('str').message).toBe('str');
  });

  it('carries the cause chain (name, message, stack, code) through its structured form', () => {
    const kernelError = new RangeError('index 9 out of bounds');
    const wrapped = new KeelError('INTERNAL', "kernel 'k' threw RangeError: index 9 out of bounds", {
      cause: kernelError,
    });
    const data = structuredClone(KeelError.toStructured(wrapped));
    const back = KeelError.fromStructured(data);
    expect(back.code).toBe('INTERNAL');
    expect(back.cause).toBeInstanceOf(Error);
    const cause = back.cause as Error;
    expect(cause.name).toBe('RangeError');
    expect(cause.message).toBe('index 9 out of bounds');
    expect(cause.stack).toBe(kernelError.stack);

    const inner = new KeelError('OUT_OF_RANGE', 'inner');
    const chain = KeelError.fromStructured(
      structuredClone(
        KeelError.toStructured(
          new KeelError('ABORTED', 'outer', { cause: new Error('mid', { cause: inner }) }),
        ),
      ),
    );
    const mid = chain.cause as Error;
    expect(mid.message).toBe('mid');
    expect(KeelError.is(mid.cause, 'OUT_OF_RANGE')).toBe(true);
    // A plain Error becomes INTERNAL with itself as the cause; a non-error value keeps its text.
    const plain = KeelError.fromStructured(KeelError.toStructured(new TypeError('t')));
    expect((plain.cause as Error).name).toBe('TypeError');
    expect(KeelError.fromStructured(KeelError.toStructured('str')).cause).toBeUndefined();
  });
});
