/**
 * Adapter selection (`listWebGpuAdapters`, `webGpuAdapterOptions`): Dawn's adapter list parsed, identical
 * names marked unselectable, the options that open adapter i, and two Keel devices on one adapter.
 */
import { ErrorCode, KeelError } from '@keel/fence';
import { describe, expect, it } from 'vitest';
import {
  createWebGpuDevice,
  listWebGpuAdapters,
  parseDawnAdapterList,
  webGpuAdapterOptions,
} from '../src/index';

const TWO_H200 = `no suitable backends found
Available adapters:
 * backend: 'vulkan', name: 'NVIDIA H200'
 * backend: 'vulkan', name: 'NVIDIA H200'
 * backend: 'vulkan', name: 'llvmpipe (LLVM 15.0.6, 256 bits)'`;

describe('parseDawnAdapterList', () => {
  it('lists every adapter in order; a repeated name is not selectable', () => {
    expect(parseDawnAdapterList(TWO_H200)).toEqual([
      { index: 0, backend: 'vulkan', name: 'NVIDIA H200', selectable: true },
      { index: 1, backend: 'vulkan', name: 'NVIDIA H200', selectable: false },
      { index: 2, backend: 'vulkan', name: 'llvmpipe (LLVM 15.0.6, 256 bits)', selectable: true },
    ]);
    expect(parseDawnAdapterList('no suitable backends found\nAvailable adapters:')).toEqual([]);
  });
});

describe('webGpuAdapterOptions', () => {
  const adapters = parseDawnAdapterList(TWO_H200);
  it("selects an adapter by Dawn's adapter= option", () => {
    expect(webGpuAdapterOptions(adapters, 0)).toEqual({ dawnOptions: ['adapter=NVIDIA H200'] });
    expect(webGpuAdapterOptions(adapters, 2)).toEqual({
      dawnOptions: ['adapter=llvmpipe (LLVM 15.0.6, 256 bits)'],
    });
  });

  it.each([
    [3, ErrorCode.OUT_OF_RANGE, 'adapter 3 does not exist (3 WebGPU adapter(s) present)'],
    [1, ErrorCode.UNAVAILABLE, "adapter 1 ('NVIDIA H200') has the same name as an earlier adapter"],
    [-1, ErrorCode.INVALID_ARGUMENT, 'must be a non-negative integer'],
  ])('adapter %j is %s', (index, code, message) => {
    try {
      webGpuAdapterOptions(adapters, index);
      expect.unreachable();
    } catch (error) {
      expect(KeelError.is(error, code)).toBe(true);
      expect((error as KeelError).message).toContain(message);
    }
  });
});

const present = await listWebGpuAdapters();
if (present.length === 0 && process.env.CI) throw new Error('CI must list a WebGPU adapter');

describe.skipIf(present.length === 0)('on this machine', () => {
  it('opens adapter 0 by name, twice: two Keel devices on one adapter', async () => {
    expect(present[0]).toMatchObject({ index: 0, selectable: true });
    const options = webGpuAdapterOptions(present, 0);
    const a = await createWebGpuDevice({ ...options, label: 'a' });
    const b = await createWebGpuDevice({ ...options, label: 'b' });
    try {
      expect(a.info.name).toBe(b.info.name);
      expect(a).not.toBe(b);
    } finally {
      await a.destroy();
      await b.destroy();
    }
  });
});
