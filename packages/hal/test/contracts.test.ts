import { Fence, TimelineSemaphore } from '@keel/fence';
import { describe, expect, it } from 'vitest';
import { abortedBy, assertBufferLive, propagateFailure, resolveRange } from '../src/driver/index';
import {
  type Buffer,
  BufferUsage,
  ceilDivWorkgroupCount,
  createExecutableExports,
  describeMemoryType,
  describeUsage,
  hasAllBits,
  isIndirectRef,
  KeelError,
  lookupExport,
  MemoryType,
  slotRef,
} from '../src/index';

function fakeBuffer(byteLength: number, state: Buffer['state'] = 'live', label?: string): Buffer {
  return { byteLength, state, label } as unknown as Buffer;
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return KeelError.is(e) ? e.code : 'not a KeelError';
  }
  return undefined;
}

describe('usage and memory bits', () => {
  it('describe bits for messages', () => {
    expect(describeUsage(BufferUsage.TRANSFER_SOURCE | BufferUsage.DISPATCH_STORAGE)).toBe(
      'TRANSFER_SOURCE|DISPATCH_STORAGE',
    );
    expect(describeUsage(0)).toBe('NONE');
    expect(describeMemoryType(MemoryType.DEVICE_LOCAL | MemoryType.HOST_VISIBLE)).toBe(
      'DEVICE_LOCAL|HOST_VISIBLE',
    );
    expect(hasAllBits(BufferUsage.DEFAULT, BufferUsage.TRANSFER)).toBe(true);
    expect(hasAllBits(BufferUsage.TRANSFER, BufferUsage.DISPATCH_STORAGE)).toBe(false);
  });
});

describe('buffer refs', () => {
  it('resolve offset and length with "to the end" default', () => {
    expect(resolveRange({}, fakeBuffer(64), 'x')).toEqual({ offset: 0, length: 64 });
    expect(resolveRange({ offset: 16 }, fakeBuffer(64), 'x')).toEqual({ offset: 16, length: 48 });
    expect(resolveRange({ offset: 16, length: 8 }, fakeBuffer(64), 'x')).toEqual({ offset: 16, length: 8 });
    expect(resolveRange({ offset: 64 }, fakeBuffer(64), 'x')).toEqual({ offset: 64, length: 0 });
  });

  it('reject ranges that leave the buffer, naming it', () => {
    expect(codeOf(() => resolveRange({ offset: 65 }, fakeBuffer(64), 'fill target'))).toBe('OUT_OF_RANGE');
    expect(() => resolveRange({ offset: 60, length: 8 }, fakeBuffer(64, 'live', 'w'), 'copy source')).toThrow(
      "copy source: range [60, 68) leaves buffer 'w' (64 bytes)",
    );
    expect(codeOf(() => resolveRange({ offset: -1 }, fakeBuffer(64), 'x'))).toBe('INVALID_ARGUMENT');
    expect(codeOf(() => resolveRange({ length: 1.5 }, fakeBuffer(64), 'x'))).toBe('INVALID_ARGUMENT');
  });

  it('tells indirect from direct refs', () => {
    expect(isIndirectRef(slotRef(0))).toBe(true);
    expect(isIndirectRef({ buffer: fakeBuffer(4) })).toBe(false);
  });

  it('assertBufferLive names the use and the state', () => {
    expect(() => assertBufferLive(fakeBuffer(8, 'deallocated'), 'copy source')).toThrow(
      'copy source: buffer (8 bytes) was released by queueDealloca and cannot be used',
    );
    expect(codeOf(() => assertBufferLive(fakeBuffer(8, 'destroyed'), 'x'))).toBe('FAILED_PRECONDITION');
    expect(codeOf(() => assertBufferLive(fakeBuffer(8), 'x'))).toBeUndefined();
  });
});

describe('executable exports', () => {
  it('default workgroup count is ceil(workload / size) per dimension', () => {
    expect(ceilDivWorkgroupCount([64, 1, 1])([1000])).toEqual([16, 1, 1]);
    expect(ceilDivWorkgroupCount([8, 8, 1])([17, 9, 3])).toEqual([3, 2, 3]);
    const [e] = createExecutableExports(
      [{ name: 'k', bindingCount: 1, constantCount: 0, workgroupSize: [4, 1, 1] }],
      'm',
    );
    expect(e!.workgroupCount([9])).toEqual([3, 1, 1]);
  });

  it('custom workgroupCount functions are kept', () => {
    const [e] = createExecutableExports(
      [{ name: 'k', bindingCount: 0, constantCount: 0, workgroupCount: (w) => [w[0]! * 2, 1, 1] }],
      'm',
    );
    expect(e!.workgroupCount([3])).toEqual([6, 1, 1]);
  });

  it('rejects bad descriptors with a message naming the export', () => {
    expect(() => createExecutableExports([], 'm')).toThrow('executable m: needs at least one export');
    expect(() =>
      createExecutableExports(
        [
          { name: 'a', bindingCount: 0, constantCount: 0 },
          { name: 'a', bindingCount: 0, constantCount: 0 },
        ],
        'm',
      ),
    ).toThrow("name 'a' is declared twice");
    expect(
      codeOf(() => createExecutableExports([{ name: 'a', bindingCount: -1, constantCount: 0 }], 'm')),
    ).toBe('INVALID_ARGUMENT');
    expect(() =>
      createExecutableExports(
        [{ name: 'a', bindingCount: 0, constantCount: 0, workgroupSize: [0, 1, 1] }],
        'm',
      ),
    ).toThrow(/workgroupSize must be three positive integers/);
  });

  it('lookupExport by name and index, NOT_FOUND otherwise', () => {
    const exports = createExecutableExports(
      [
        { name: 'a', bindingCount: 0, constantCount: 0 },
        { name: 'b', bindingCount: 2, constantCount: 1 },
      ],
      'm',
    );
    expect(lookupExport(exports, 'b', 'm').index).toBe(1);
    expect(lookupExport(exports, 0, 'm').name).toBe('a');
    expect(codeOf(() => lookupExport(exports, 'c', 'm'))).toBe('NOT_FOUND');
    expect(codeOf(() => lookupExport(exports, 7, 'm'))).toBe('NOT_FOUND');
  });
});

describe('failure propagation', () => {
  it('fails every signal timepoint with ABORTED carrying the original failure', async () => {
    const a = new TimelineSemaphore(0);
    const b = new TimelineSemaphore(0);
    const original = new KeelError('DATA_LOSS', 'kernel crashed');
    propagateFailure(Fence.of({ semaphore: a, value: 1 }, { semaphore: b, value: 2 }), original, 'queueCopy');
    for (const s of [a, b]) {
      const f = s.failure as KeelError;
      expect(f.code).toBe('ABORTED');
      expect(f.cause).toBe(original);
      expect(f.message).toBe('queueCopy: a wait timepoint failed (kernel crashed)');
    }
    expect(abortedBy('x', 'op').cause).toBe('x');
  });
});
