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

  it('rejects codes outside the closed set', () => {
    expect(() => new KeelError('NOPE' as ErrorCode, 'x')).toThrow(TypeError);
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
