import { describeValue, ErrorCode, KeelError } from '@keel/fence';
import { describe, expect, it } from 'vitest';
import { checkOptions } from '../src/options';

const rules = {
  workers: { type: 'integer', min: 1, max: 64 },
  mode: { type: 'string', oneOf: ['sync', 'task'] },
  budget: { type: 'number', min: 1, allowInfinity: true },
  onError: { type: 'function' },
} as const;

function codeAndMessage(fn: () => unknown): [string, string] {
  try {
    fn();
  } catch (e) {
    expect(KeelError.is(e)).toBe(true);
    return [(e as KeelError).code, (e as KeelError).message];
  }
  throw new Error('did not throw');
}

describe('checkOptions', () => {
  it('accepts undefined, {} and valid options', () => {
    expect(checkOptions('f', undefined, rules)).toEqual({});
    expect(checkOptions('f', { workers: 2, mode: 'task', budget: Infinity }, rules)).toEqual({
      workers: 2,
      mode: 'task',
      budget: Infinity,
    });
    expect(checkOptions('f', { workers: undefined }, rules)).toEqual({ workers: undefined });
  });

  it('refuses a non-object options argument (a string, an array, null)', () => {
    expect(codeAndMessage(() => checkOptions('createCpuDevice', 'sync', rules))).toEqual([
      ErrorCode.INVALID_ARGUMENT,
      'createCpuDevice: options must be an object, got "sync"',
    ]);
    expect(codeAndMessage(() => checkOptions('f', [1], rules))[1]).toContain('an array of 1');
    expect(codeAndMessage(() => checkOptions('f', null, rules))[1]).toContain('got null');
  });

  it('names the unknown key and lists the known ones', () => {
    const [code, message] = codeAndMessage(() => checkOptions('f', { wrokers: 2 }, rules));
    expect(code).toBe(ErrorCode.INVALID_ARGUMENT);
    expect(message).toContain("unknown option 'wrokers'");
    expect(message).toContain('workers, mode, budget, onError');
  });

  it('names the option, the rule and the value (strings stay quoted)', () => {
    expect(codeAndMessage(() => checkOptions('f', { workers: '4' }, rules))[1]).toBe(
      `f: option 'workers' must be an integer in [1, 64], got "4"`,
    );
    expect(codeAndMessage(() => checkOptions('f', { workers: 0 }, rules))[1]).toContain('got 0');
    expect(codeAndMessage(() => checkOptions('f', { mode: 'tpu' }, rules))[1]).toBe(
      `f: option 'mode' must be one of 'sync', 'task', got "tpu"`,
    );
    expect(codeAndMessage(() => checkOptions('f', { budget: -5 }, rules))[1]).toContain(
      '≥ 1 or Infinity, got -5',
    );
    expect(codeAndMessage(() => checkOptions('f', { budget: Number.NaN }, rules))[1]).toContain('got NaN');
    expect(codeAndMessage(() => checkOptions('f', { onError: {} }, rules))[1]).toContain('an empty object');
  });
});

describe('describeValue', () => {
  it('never shows [object …] and keeps types apart', () => {
    expect(describeValue('64')).toBe('"64"');
    expect(describeValue(64)).toBe('64');
    expect(describeValue(2 ** 33)).toBe('8589934592');
    expect(describeValue(Promise.resolve(1))).toBe('a Promise');
    expect(describeValue({ buffer: 1, offset: 0 })).toBe('an object { buffer, offset }');
    expect(describeValue(new Float32Array(3))).toBe('a Float32Array of 3 elements');
    expect(describeValue(new ArrayBuffer(8))).toBe('an ArrayBuffer of 8 bytes');
    expect(describeValue(new Map())).toBe('a Map');
    expect(describeValue(() => 0)).toBe('a function');
    expect(describeValue(10n)).toBe('10n');
    for (const v of [{}, [], new Date(), Promise.resolve(), Symbol('s'), new Proxy({}, {})]) {
      expect(describeValue(v)).not.toMatch(/\[object/);
    }
  });

  it('does not throw on hostile objects', () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    expect(describeValue(proxy)).toBe('an unreadable value');
  });
});
