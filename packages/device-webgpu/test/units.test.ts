/**
 * Unit tests of the device's pure parts (no GPU needed): the LRU cache, the uniform ring's span
 * arithmetic (with a fake GPUDevice), WGSL preparation, pattern replication.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { adapterName, isSoftwareAdapter } from '../src/device-info';
import { ErrorScopes } from '../src/gpu-errors';
import { NumericKeyCache } from '../src/numeric-key-cache';
import { replicatePattern } from '../src/transfer-encoder';
import { UniformRing } from '../src/uniform-ring';
import { prepareWgsl } from '../src/wgsl-source';

describe('NumericKeyCache', () => {
  it('finds what was stored and evicts the least recently used (model check)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.tuple(fc.nat({ max: 12 }), fc.nat({ max: 3 })), { maxLength: 200 }),
        (capacity, operations) => {
          const cache = new NumericKeyCache<string>(2, capacity);
          const model: string[] = []; // keys, most recent last
          for (const [a, b] of operations) {
            const key = `${a}:${b}`;
            cache.key[0] = a;
            cache.key[1] = b * 2 ** 40; // high bits matter too
            const found = cache.get();
            const at = model.indexOf(key);
            expect(found).toBe(at >= 0 ? key : undefined);
            if (at >= 0) {
              model.splice(at, 1);
              model.push(key);
            } else {
              cache.set(key);
              model.push(key);
              if (model.length > capacity) model.shift();
            }
            expect(cache.size).toBe(model.length);
          }
        },
      ),
    );
  });
});

/** A GPUDevice stand-in for the ring: records writeBuffer calls and buffer lifetimes. */
function fakeDevice() {
  const writes: { buffer: number; offset: number; size: number }[] = [];
  const destroyed = new Set<number>();
  let next = 0;
  const device = {
    createBuffer: (d: { size: number }) => {
      const id = next++;
      return { id, size: d.size, destroy: () => destroyed.add(id) };
    },
    createBindGroup: () => ({}),
    pushErrorScope: () => {},
    popErrorScope: async () => null,
    queue: {
      writeBuffer: (
        buffer: { id: number },
        offset: number,
        _data: unknown,
        _dataOffset: number,
        size: number,
      ) => writes.push({ buffer: buffer.id, offset, size }),
    },
  };
  return { device: device as unknown as GPUDevice, writes, destroyed };
}

describe('UniformRing', () => {
  it('never overlaps spans of one submission and uploads each before its submit (property)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.array(fc.oneof(fc.integer({ min: 0, max: 4096 }), fc.integer({ min: 0, max: 300_000 })), {
            maxLength: 30,
          }),
          { maxLength: 12 },
        ),
        (submissions) => {
          const fake = fakeDevice();
          const ring = new UniformRing(
            fake.device,
            {} as GPUBindGroupLayout,
            256,
            new ErrorScopes(fake.device),
          );
          for (const sizes of submissions) {
            const spans: { buffer: GPUBuffer; start: number; end: number }[] = [];
            for (const size of sizes) {
              const start = ring.reserve(size);
              expect(start % 256).toBe(0);
              expect(start + size + 256).toBeLessThanOrEqual(ring.capacity);
              spans.push({ buffer: ring.buffer, start, end: start + size });
            }
            const writesBefore = fake.writes.length;
            ring.flush();
            // Spans in one ring buffer are disjoint.
            for (let i = 0; i < spans.length; i++) {
              for (let j = 0; j < i; j++) {
                const a = spans[i] as { buffer: GPUBuffer; start: number; end: number };
                const b = spans[j] as { buffer: GPUBuffer; start: number; end: number };
                if (a.buffer !== b.buffer || a.end === a.start || b.end === b.start) continue;
                expect(a.start >= b.end || b.start >= a.end).toBe(true);
              }
            }
            // Every span's bytes were written to its buffer (by a wrap, a growth or this flush).
            for (const span of spans) {
              if (span.end === span.start) continue;
              const id = (span.buffer as unknown as { id: number }).id;
              const covered = fake.writes.some(
                (w) => w.buffer === id && w.offset <= span.start && w.offset + w.size >= span.end,
              );
              expect(covered).toBe(true);
            }
            expect(fake.writes.length).toBeGreaterThanOrEqual(writesBefore);
            ring.submitted();
          }
        },
      ),
    );
  });
});

describe('prepareWgsl', () => {
  it('rewrites read-only storage to read-write and finds group-0 binding kinds', () => {
    const code = `
// @group(0) @binding(7) var<storage, read> commented: array<u32>;
@group(0) @binding(0) var<storage, read> a: array<f32>;
@binding(1) @group(0) var<storage> b: array<f32>;
@group(0) @binding(2) var<uniform> u: vec4<f32>;
@group(0) @binding(3) var<storage, read_write> c: array<f32>;
@group(1) @binding(0) var<uniform> constants: vec4<u32>;`;
    const prepared = prepareWgsl(code);
    expect(prepared.code).toContain('@group(0) @binding(0) var<storage, read_write> a');
    expect(prepared.code).toContain('@binding(1) @group(0) var<storage, read_write> b');
    expect(prepared.code).toContain('var<storage, read> commented'); // comments are left alone
    expect([...prepared.group0.entries()].sort()).toEqual([
      [0, 's'],
      [1, 's'],
      [2, 'u'],
      [3, 's'],
    ]);
  });
});

describe('replicatePattern', () => {
  it('repeats 1- and 2-byte patterns over a little-endian word', () => {
    expect(replicatePattern(0xab, 1)).toBe(0xabababab);
    expect(replicatePattern(0x1234, 2)).toBe(0x12341234);
    expect(replicatePattern(0xdeadbeef, 4)).toBe(0xdeadbeef);
  });
});

describe('adapterName', () => {
  it('names the adapter by device and description, else vendor and architecture', () => {
    const info = (fields: Partial<Record<'vendor' | 'architecture' | 'device' | 'description', string>>) =>
      ({ vendor: '', architecture: '', device: '', description: '', ...fields }) as unknown as GPUAdapterInfo;
    expect(adapterName(info({ device: 'nvidia-h200', description: 'NVIDIA: 580.159.04 580.159.4.0' }))).toBe(
      'nvidia-h200 (NVIDIA: 580.159.04 580.159.4.0)',
    );
    expect(
      adapterName(info({ device: 'llvmpipe-llvm-15-0-6-256-bits-', description: 'llvmpipe: Mesa 25.0.7' })),
    ).toBe('llvmpipe-llvm-15-0-6-256-bits (llvmpipe: Mesa 25.0.7)');
    expect(adapterName(info({ vendor: 'google', architecture: 'swiftshader' }))).toBe('google swiftshader');
    expect(adapterName(undefined)).toBe('WebGPU adapter');
  });
});

describe('isSoftwareAdapter', () => {
  const info = (fields: Partial<Record<'vendor' | 'architecture' | 'device' | 'description', string>>) =>
    ({ vendor: '', architecture: '', device: '', description: '', ...fields }) as unknown as GPUAdapterInfo;

  it('recognises CPU adapters (lavapipe, SwiftShader, software, fallback) and not GPUs', () => {
    expect(
      isSoftwareAdapter(info({ vendor: 'mesa', architecture: 'software', device: 'llvmpipe-llvm-15' })),
    ).toBe(true);
    expect(isSoftwareAdapter(info({ vendor: 'google', architecture: 'swiftshader' }))).toBe(true);
    expect(isSoftwareAdapter(info({ description: 'llvmpipe: Mesa 25.0.7' }))).toBe(true);
    expect(isSoftwareAdapter({ ...info({}), isFallbackAdapter: true } as unknown as GPUAdapterInfo)).toBe(
      true,
    );
    expect(
      isSoftwareAdapter(info({ vendor: 'nvidia', device: 'nvidia-h200', description: 'NVIDIA: 580.159.04' })),
    ).toBe(false);
    expect(isSoftwareAdapter(undefined)).toBe(false);
  });
});
