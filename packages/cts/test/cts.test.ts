/**
 * Self-tests of the suite's machinery (the cases themselves run in each device package, against a
 * real device): case ids, the Binder, the assertions, and option checking.
 */
import { readFileSync } from 'node:fs';
import { type Buffer, BufferUsage, ErrorCode, KeelError } from '@keel/hal';
import { describe, expect, it } from 'vitest';
import {
  Binder,
  CTS_CASES,
  CTS_KERNEL_EXPORTS,
  causedBy,
  checkArrayEqual,
  defineDeviceConformance,
  expectKeelError,
  f32Bits,
} from '../src/index';

const fakeBuffer = (label: string) =>
  ({ label, byteLength: 64, usage: BufferUsage.DEFAULT }) as unknown as Buffer;

describe('@keel/cts', () => {
  it('has unique case ids with tags and titles', () => {
    const ids = CTS_CASES.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const c of CTS_CASES) {
      expect(c.id).toMatch(/^[a-z-]+\.[a-z0-9-]+$/);
      expect(c.tags.length).toBeGreaterThan(0);
      expect(c.title.length).toBeGreaterThan(10);
    }
    expect(ids.length).toBeGreaterThanOrEqual(35);
  });

  it("lists every case in the README's table, in the order they run", () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const table = readme.slice(readme.indexOf('## Cases'), readme.indexOf('## The null device'));
    const listed = [...table.matchAll(/^\| `([a-z-]+\.[a-z0-9-]+)` \|/gm)].map((m) => m[1]);
    expect(listed).toEqual(CTS_CASES.map((c) => c.id));
  });

  it('declares the kernel set with unique export names', () => {
    const names = Object.values(CTS_KERNEL_EXPORTS).flatMap((exports) => exports.map((e) => e.name));
    expect(new Set(names).size).toBe(names.length);
    expect(CTS_KERNEL_EXPORTS.negateDouble.map((e) => e.name)).toEqual(['negate', 'double']);
  });

  it('Binder hands out direct refs or one slot per distinct buffer', () => {
    const a = fakeBuffer('a');
    const b = fakeBuffer('b');
    const direct = new Binder('direct');
    expect(direct.ref(a, 4, 8)).toEqual({ buffer: a, offset: 4, length: 8 });
    expect(direct.table()).toBeUndefined();
    const slots = new Binder('slots');
    expect(slots.ref(a)).toEqual({ slot: 0, offset: undefined, length: undefined });
    expect(slots.ref(b, 16)).toEqual({ slot: 1, offset: 16, length: undefined });
    expect(slots.ref(a, 8, 4)).toEqual({ slot: 0, offset: 8, length: 4 });
    expect(slots.table()).toEqual([{ buffer: a }, { buffer: b }]);
  });

  it('assertions report what differs', () => {
    expect(() => checkArrayEqual([1, 2, 3], [1, 2, 4], 'xs')).toThrow(/element 2 is 3, expected 4/);
    const e = expectKeelError(
      () => {
        throw new KeelError(ErrorCode.OUT_OF_RANGE, 'nope');
      },
      ErrorCode.OUT_OF_RANGE,
      'thrower',
    );
    expect(e.message).toBe('nope');
    expect(() => expectKeelError(() => 1, ErrorCode.OUT_OF_RANGE, 'quiet')).toThrow(/nothing was thrown/);
    const root = new Error('root');
    expect(causedBy(new KeelError(ErrorCode.ABORTED, 'x', { cause: root }), root)).toBe(true);
    expect(f32Bits(1)).toBe(0x3f800000);
  });

  it('rejects unknown case ids in unsupported / expectedFailures', () => {
    expect(() =>
      defineDeviceConformance('bad', () => Promise.reject(new Error('unused')), {
        unsupported: { 'no.such-case': 'typo' },
      }),
    ).toThrow(/unknown case 'no.such-case'/);
  });
});
