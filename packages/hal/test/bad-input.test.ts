/** Issue 15: shared checks refuse what both devices must refuse, with messages that show values as they are. */
import { Fence } from '@keel/fence';
import { describe, expect, it } from 'vitest';
import { checkBufferParams, checkFillPattern, checkQueueFences, hostBytes } from '../src/driver/index';
import {
  BufferUsage,
  createExecutableExports,
  type ExportDescriptor,
  KeelError,
  MemoryType,
} from '../src/index';

function failure(fn: () => unknown): KeelError {
  try {
    fn();
  } catch (e) {
    if (KeelError.is(e)) return e;
    throw new Error(`not a KeelError: ${String(e)}`);
  }
  throw new Error('did not throw');
}

describe('checkBufferParams', () => {
  it('refuses usage bits that BufferUsage does not define', () => {
    const e = failure(() => checkBufferParams({ usage: 1 << 6 }, 'createBuffer'));
    expect(e.code).toBe('INVALID_ARGUMENT');
    expect(e.message).toMatch(/params\.usage must be BufferUsage bits.*got 64/);
    expect(failure(() => checkBufferParams({ usage: 2 ** 40 }, 'c')).code).toBe('INVALID_ARGUMENT');
    expect(failure(() => checkBufferParams({ usage: '4' as unknown as number }, 'c')).message).toMatch(
      /got "4"/,
    );
    expect(checkBufferParams({ usage: BufferUsage.DEFAULT | BufferUsage.MAPPING }, 'c')).toBe(0x27);
  });

  it('refuses a memoryType that is not MemoryType bits', () => {
    expect(
      failure(() => checkBufferParams({ usage: 1, memoryType: 'x' as unknown as number }, 'c')).message,
    ).toMatch(/params\.memoryType must be MemoryType bits.*got "x"/);
    expect(failure(() => checkBufferParams({ usage: 1, memoryType: 16 }, 'c')).code).toBe('INVALID_ARGUMENT');
    expect(failure(() => checkBufferParams({ usage: 1, memoryType: 1.5 }, 'c')).code).toBe(
      'INVALID_ARGUMENT',
    );
    expect(
      checkBufferParams({ usage: 1, memoryType: MemoryType.DEVICE_LOCAL | MemoryType.HOST_CACHED }, 'c'),
    ).toBe(1);
  });

  it('refuses masks wider than 32 bits, a non-string label, a non-object', () => {
    expect(failure(() => checkBufferParams({ usage: 1, affinity: 2 ** 32 + 1 }, 'c')).message).toMatch(
      /affinity must be a 32-bit integer mask.*got 4294967297/,
    );
    expect(
      failure(() => checkBufferParams({ usage: 1, label: 5 as unknown as string }, 'c')).message,
    ).toMatch(/label.*got 5/);
    expect(failure(() => checkBufferParams([] as unknown as { usage: number }, 'c')).message).toMatch(
      /an array of 0/,
    );
  });
});

describe('messages show values with describeValue', () => {
  it('fences, host views and fill patterns', () => {
    expect(failure(() => checkQueueFences({}, Fence.empty, 'op')).message).toMatch(/got an empty object/);
    expect(failure(() => checkQueueFences(Fence.empty, Promise.resolve(), 'op')).message).toMatch(
      /got a Promise/,
    );
    expect(failure(() => hostBytes({ a: 1 }, 'op', 'source')).message).toMatch(/got an object \{ a \}/);
    expect(failure(() => checkFillPattern('64', 1, 'op')).message).toMatch(/pattern "64"/);
    expect(failure(() => checkFillPattern(1, '4', 'op')).message).toMatch(/pattern length "4"/);
  });
});

describe('createExecutableExports', () => {
  it('refuses a workgroupCount that is not a function, a non-object descriptor, a non-array size', () => {
    expect(
      failure(() =>
        createExecutableExports(
          [
            {
              name: 'e',
              bindingCount: 0,
              constantCount: 0,
              workgroupCount: {} as unknown as () => [number, number, number],
            },
          ],
          "'x'",
        ),
      ).message,
    ).toBe(
      "executable 'x' export 0 'e': workgroupCount must be a function (workload) => [x, y, z], got an empty object",
    );
    expect(failure(() => createExecutableExports([7 as unknown as ExportDescriptor], "'x'")).code).toBe(
      'INVALID_ARGUMENT',
    );
    expect(
      failure(() =>
        createExecutableExports(
          [
            {
              name: 'e',
              bindingCount: 0,
              constantCount: 0,
              workgroupSize: 'abc' as unknown as [number, number, number],
            },
          ],
          "'x'",
        ),
      ).message,
    ).toMatch(/workgroupSize must be three positive integers, got "abc"/);
  });
});
