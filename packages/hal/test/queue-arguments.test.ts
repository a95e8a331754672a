import { Fence } from '@keel/fence';
import { describe, expect, it } from 'vitest';
import {
  type BufferClass,
  type ByteRange,
  checkCopyRanges,
  checkDeallocaBuffer,
  checkFillPattern,
  checkFillRange,
  checkHostLength,
  checkQueueFences,
  checkQueueRef,
  hostBytes,
  isFence,
} from '../src/driver/index';
import { type Buffer, BufferUsage, type Device, KeelError } from '../src/index';

const device = { info: { backend: 'fake' } } as unknown as Device;
const other = { info: { backend: 'fake' } } as unknown as Device;

class FakeBuffer {
  constructor(
    readonly device: Device,
    readonly byteLength: number,
    readonly usage: number,
    readonly state: Buffer['state'] = 'live',
    readonly label?: string,
    readonly placement = { affinity: 1, queueAllocated: false },
  ) {}
}
/** FakeBuffer as the device's buffer class (it has only what the checks read). */
const Fake = FakeBuffer as unknown as BufferClass<Buffer>;
const fake = (byteLength: number, usage = BufferUsage.TRANSFER_TARGET, state: Buffer['state'] = 'live') =>
  new FakeBuffer(device, byteLength, usage, state, 'b') as unknown as Buffer & FakeBuffer;

function error(fn: () => unknown): { code: string; message: string } | undefined {
  try {
    fn();
  } catch (e) {
    if (!KeelError.is(e)) throw e;
    return { code: e.code, message: e.message };
  }
  return undefined;
}

const W = "device 'x' queueWrite";

describe('checkQueueRef', () => {
  const out: ByteRange = { offset: -1, length: -1 };
  const check = (ref: unknown, defaultLength?: number) =>
    checkQueueRef(device, Fake, ref as never, BufferUsage.TRANSFER_TARGET, W, 'target', defaultLength, out);

  it('writes the range into the caller-owned object and returns the buffer', () => {
    const b = fake(64);
    expect(check({ buffer: b, offset: 16 })).toBe(b);
    expect(out).toEqual({ offset: 16, length: 48 });
    expect(check({ buffer: b, offset: 8 }, 4)).toBe(b);
    expect(out).toEqual({ offset: 8, length: 4 });
    expect(check({ buffer: b, length: 12 }, 4)).toBe(b);
    expect(out).toEqual({ offset: 0, length: 12 });
  });

  it('names the operation, the argument and the rule', () => {
    const b = fake(64);
    expect(error(() => check(null))).toEqual({
      code: 'INVALID_ARGUMENT',
      message: `${W} target: expected a buffer ref { buffer, offset?, length? }, got null`,
    });
    expect(error(() => check({ slot: 0 }))?.message).toBe(
      `${W} target: queue operations take direct refs; binding-table slots exist only in command buffers`,
    );
    expect(error(() => check({ buffer: {} }))?.message).toBe(
      `${W} target: ref.buffer must be a buffer of a fake device, got an empty object`,
    );
    expect(error(() => check({ buffer: new FakeBuffer(other, 8, 0xff) }))?.message).toBe(
      `${W} target: buffer (8 bytes) belongs to another device`,
    );
    expect(error(() => check({ buffer: fake(8, BufferUsage.TRANSFER_TARGET, 'destroyed') }))).toEqual({
      code: 'FAILED_PRECONDITION',
      message: `${W} target: buffer 'b' (8 bytes) was destroyed and cannot be used`,
    });
    expect(error(() => check({ buffer: fake(8, BufferUsage.TRANSFER_SOURCE) }))?.message).toBe(
      `${W} target: buffer 'b' (8 bytes) has usage TRANSFER_SOURCE, the operation needs TRANSFER_TARGET`,
    );
    expect(error(() => check({ buffer: b, offset: 60 }, 8))).toEqual({
      code: 'OUT_OF_RANGE',
      message: `${W} target: range [60, 68) leaves buffer 'b' (64 bytes)`,
    });
    expect(error(() => check({ buffer: b, offset: 1.5 }))?.code).toBe('INVALID_ARGUMENT');
  });
});

describe('the other queue-argument checks', () => {
  it('fences, host bytes, host lengths, fills, copies, deallocas', () => {
    expect(isFence(Fence.empty)).toBe(true);
    expect(isFence({})).toBe(false);
    expect(error(() => checkQueueFences(Fence.empty, Fence.empty, W))).toBeUndefined();
    expect(error(() => checkQueueFences(Fence.empty, 3, W))?.message).toBe(
      `${W}: signal must be a Fence (use Fence.empty for none), got 3`,
    );
    const words = new Uint32Array(4);
    expect(hostBytes(words, W, 'source').byteLength).toBe(16);
    expect(error(() => hostBytes([1], W, 'source'))?.message).toBe(
      `${W} source: expected an ArrayBufferView, got an array of 1`,
    );
    expect(error(() => checkHostLength('queueWrite', 8, 8, W))).toBeUndefined();
    expect(error(() => checkHostLength('queueWrite', 8, 4, W))?.message).toBe(
      `${W}: the target range has 8 bytes, the source 4`,
    );
    expect(error(() => checkHostLength('queueRead', 8, 4, W))?.message).toBe(
      `${W}: the source range has 8 bytes, the target 4`,
    );
    expect(error(() => checkHostLength('queueUpdate', 8, 4, W))?.message).toBe(
      `${W} target: length 8 differs from the source's 4 bytes`,
    );
    expect(error(() => checkFillPattern(0x1ff, 1, W))?.message).toBe(
      `${W}: pattern 511 is not an unsigned integer that fits in 1 byte(s)`,
    );
    expect(error(() => checkFillPattern(0, 3, W))?.message).toBe(`${W}: pattern length 3 is not 1, 2 or 4`);
    expect(error(() => checkFillRange({ offset: 2, length: 8 }, 4, W))?.message).toBe(
      `${W} target: offset 2 and length 8 must be multiples of the pattern length 4`,
    );
    const b = fake(64);
    expect(error(() => checkCopyRanges(b, 0, 16, b, 16, 16, W))).toBeUndefined();
    expect(error(() => checkCopyRanges(b, 0, 16, b, 8, 16, W))?.message).toBe(
      `${W}: source range [0, 16) and target range [8, 24) of buffer 'b' (64 bytes) overlap`,
    );
    expect(error(() => checkCopyRanges(b, 0, 16, b, 32, 8, W))?.message).toBe(
      `${W}: source length 16 differs from target length 8`,
    );
    expect(error(() => checkDeallocaBuffer(device, Fake, b, W))?.message).toBe(
      `${W}: buffer 'b' (64 bytes) was made by createBuffer; release it with destroy()`,
    );
    expect(error(() => checkDeallocaBuffer(other, Fake, b, W))?.message).toBe(
      `${W}: the buffer is not a buffer of this device`,
    );
  });
});
