/**
 * Issue 16: PoolRegistry — pools made on first use, dealloca's allocator found through the allocation's
 * owner (not a pool name), one stats map, held bytes, destroy with and without forgetting.
 */
import { Fence, TimelineSemaphore } from '@keel/fence';
import { ErrorCode, KeelError, QueueAffinity } from '@keel/hal';
import { describe, expect, it } from 'vitest';
import { ArrayBufferSlabProvider, PoolRegistry, QueueAllocator, TlsfPool } from '../src/index';

function registry(): PoolRegistry<ArrayBuffer> {
  return new PoolRegistry(new ArrayBufferSlabProvider(), {
    poolLabel: 'test alloca',
    deviceLabel: 'test',
    backend: 'test',
    alignment: 16,
    slabSize: 64 * 1024,
    ringCapacity: 64 * 1024,
  });
}

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    if (KeelError.is(error)) return `${error.code}: ${error.message}`;
    throw error;
  }
  return undefined;
}

describe('PoolRegistry', () => {
  it('makes each named pool once and refuses an unknown one naming it', () => {
    const pools = registry();
    const tlsf = pools.allocator('tlsf', 'alloca');
    expect(pools.allocator('tlsf', 'alloca')).toBe(tlsf);
    expect(pools.allocator('ring', 'alloca')).not.toBe(tlsf);
    expect(code(() => pools.allocator('fancy', 'test queueAlloca'))).toBe(
      `${ErrorCode.INVALID_ARGUMENT}: test queueAlloca: unknown pool 'fancy' (the test device has 'tlsf', 'ring' and 'passthrough')`,
    );
    expect([...pools.stats().keys()].sort()).toEqual(['ring', 'tlsf']);
  });

  it("finds an allocation's allocator through its owner", () => {
    const pools = registry();
    const ring = pools.allocator('ring', 'alloca');
    const tlsf = pools.allocator('tlsf', 'alloca');
    const s = new TimelineSemaphore(0);
    const a = ring.alloca(QueueAffinity.ANY, Fence.empty, Fence.of({ semaphore: s, value: 1 }), 128);
    const b = tlsf.alloca(QueueAffinity.ANY, Fence.empty, Fence.of({ semaphore: s, value: 2 }), 128);
    expect(pools.ownerOf(a, 'dealloca')).toBe(ring);
    expect(pools.ownerOf(b, 'dealloca')).toBe(tlsf);
    expect(pools.heldBytes()).toBe(256);
    const stranger = new QueueAllocator(new TlsfPool(new ArrayBufferSlabProvider(), { slabSize: 4096 }));
    const c = stranger.alloca(QueueAffinity.ANY, Fence.empty, Fence.empty, 16);
    expect(code(() => pools.ownerOf(c, 'test queueDealloca'))).toBe(
      `${ErrorCode.INVALID_ARGUMENT}: test queueDealloca: the allocation was not made by this device`,
    );
    stranger.destroy();
  });

  it('deallocas through the owner, and refuses a buffer without an allocation or with a stranger one', async () => {
    const pools = registry();
    const tlsf = pools.allocator('tlsf', 'alloca');
    const s = new TimelineSemaphore(0);
    const a = tlsf.alloca(QueueAffinity.ANY, Fence.empty, Fence.empty, 128);
    const buffer = { byteLength: 128, label: 'activations' };
    pools.dealloca(0, Fence.empty, Fence.of({ semaphore: s, value: 1 }), buffer, a, 'test queueDealloca');
    await s.wait(1, { timeoutMs: 1000 });
    expect(tlsf.stats.deallocas).toBe(1);
    expect(tlsf.stats.liveBytes).toBe(0);
    expect(
      code(() => pools.dealloca(0, Fence.empty, Fence.empty, buffer, undefined, 'test queueDealloca')),
    ).toBe(
      `${ErrorCode.INVALID_ARGUMENT}: test queueDealloca: buffer 'activations' (128 bytes) was made by createBuffer; release it with destroy()`,
    );
    const stranger = new QueueAllocator(new TlsfPool(new ArrayBufferSlabProvider(), { slabSize: 4096 }));
    const c = stranger.alloca(QueueAffinity.ANY, Fence.empty, Fence.empty, 16);
    expect(code(() => pools.dealloca(0, Fence.empty, Fence.empty, buffer, c, 'test queueDealloca'))).toBe(
      `${ErrorCode.INVALID_ARGUMENT}: test queueDealloca: the allocation was not made by this device`,
    );
    expect(stranger.stats.deallocas).toBe(0);
    stranger.destroy();
  });

  it('keeps statistics readable after destroy(false), forgets them after destroy()', () => {
    const pools = registry();
    pools.allocator('tlsf', 'alloca').alloca(QueueAffinity.ANY, Fence.empty, Fence.empty, 64);
    expect(pools.stats().get('tlsf')?.allocas).toBe(1);
    pools.destroy(false);
    expect(pools.stats().get('tlsf')?.allocas).toBe(1);
    pools.destroy();
    expect(pools.stats().size).toBe(0);
  });

  it('retire(): fresh allocators for later allocas; a retired one serves its deallocas and is destroyed once it holds nothing', async () => {
    const pools = registry();
    const old = pools.allocator('tlsf', 'alloca');
    const s = new TimelineSemaphore(0);
    const a = old.alloca(QueueAffinity.ANY, Fence.empty, Fence.empty, 128);
    pools.retire();
    expect(pools.retiredCount).toBe(1);
    expect(old.destroyed).toBe(false);
    const fresh = pools.allocator('tlsf', 'alloca');
    expect(fresh).not.toBe(old);
    expect(pools.stats().get('tlsf')?.allocas).toBe(0);
    // Still live: the retired allocator is kept, finds its allocation and counts its bytes.
    expect(pools.ownerOf(a, 'dealloca')).toBe(old);
    expect(pools.heldBytes()).toBe(128);
    const gate = new TimelineSemaphore(0);
    const buffer = { byteLength: 128, label: 'x' };
    pools.dealloca(
      0,
      Fence.of({ semaphore: gate, value: 1 }),
      Fence.of({ semaphore: s, value: 1 }),
      buffer,
      a,
      'dealloca',
    );
    // Dying (its frontier not reached yet): still kept.
    pools.allocator('tlsf', 'alloca');
    expect(old.destroyed).toBe(false);
    gate.signal(1);
    await s.wait(1, { timeoutMs: 1000 });
    expect(old.stats.deallocas).toBe(1);
    // The next allocator call destroys it (its slab goes back).
    expect(pools.allocator('tlsf', 'alloca')).toBe(fresh);
    expect(old.destroyed).toBe(true);
    expect(pools.retiredCount).toBe(0);
    expect(pools.heldBytes()).toBe(0);
    pools.destroy();
  });

  it('retire() with nothing live destroys the allocators at once; destroy() ends retired ones too', () => {
    const pools = registry();
    const idle = pools.allocator('ring', 'alloca');
    const busy = pools.allocator('tlsf', 'alloca');
    busy.alloca(QueueAffinity.ANY, Fence.empty, Fence.empty, 64);
    pools.retire();
    expect(idle.destroyed).toBe(true);
    expect(busy.destroyed).toBe(false);
    expect(pools.retiredCount).toBe(1);
    pools.destroy();
    expect(busy.destroyed).toBe(true);
    expect(pools.retiredCount).toBe(0);
  });
});
