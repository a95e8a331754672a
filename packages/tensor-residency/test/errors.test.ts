/** Bad input always gets a KeelError naming the object and the rule. */
import { createCpuDevice } from '@keel/device-cpu';
import { Fence } from '@keel/fence';
import { ErrorCode } from '@keel/hal';
import { afterAll, describe, expect, it } from 'vitest';
import { ResidencyManager, Tensor } from '../src/index';
import { ANY, expectKeelError, signalOf } from './helpers';

describe('bad input', () => {
  const device = createCpuDevice({ mode: 'sync', queues: 1 });
  const m = new ResidencyManager(device, { budgetBytes: 4096, label: 'small' });
  afterAll(async () => {
    await device.destroy();
  });

  it('tensor construction: dtype, shape and data mismatches', async () => {
    await expectKeelError(() => Tensor.empty('f16' as 'f32', [2]), ErrorCode.INVALID_ARGUMENT, /dtype "f16"/);
    await expectKeelError(() => Tensor.empty('f32', [2, -1]), ErrorCode.INVALID_ARGUMENT, /dimension 1/);
    await expectKeelError(() => Tensor.empty('f32', [2, 0]), ErrorCode.INVALID_ARGUMENT, /no elements/);
    await expectKeelError(() => Tensor.empty('f32', 3 as unknown as number[]), ErrorCode.INVALID_ARGUMENT);
    await expectKeelError(
      () => Tensor.fromHost('f32', [2, 2], new Int32Array(4) as unknown as Float32Array),
      ErrorCode.INVALID_ARGUMENT,
      /dtype mismatch.*Float32Array.*Int32Array/,
    );
    await expectKeelError(
      () => Tensor.fromHost('f32', [2, 2], new Float32Array(5)),
      ErrorCode.INVALID_ARGUMENT,
      /shape mismatch.*4 elements, got 5/,
    );
    const t = Tensor.zeros('u8', [3]);
    await expectKeelError(() => t.write([1, 2]), ErrorCode.INVALID_ARGUMENT, /shape mismatch/);
    await expectKeelError(
      () => t.write(new Uint16Array(3) as unknown as Uint8Array),
      ErrorCode.INVALID_ARGUMENT,
      /dtype/,
    );
    await expectKeelError(() => t.write('abc' as unknown as number[]), ErrorCode.INVALID_ARGUMENT);
  });

  it('ResidencyManager options are validated at creation (issue 15)', async () => {
    await expectKeelError(
      () => new ResidencyManager(device, { budget: 4096 } as never),
      ErrorCode.INVALID_ARGUMENT,
      /ResidencyManager: unknown option 'budget' \(known options: budgetBytes, affinity, allocation, usage, hostMapping, label\)/,
    );
    await expectKeelError(
      () => new ResidencyManager(device, { budgetBytes: '4096' } as never),
      ErrorCode.INVALID_ARGUMENT,
      /option 'budgetBytes' must be an integer ≥ 1, got "4096"/,
    );
    await expectKeelError(
      () => new ResidencyManager(device, { affinity: 2 ** 33 }),
      ErrorCode.INVALID_ARGUMENT,
      /option 'affinity' must be a 32-bit integer queue mask, got 8589934592/,
    );
    await expectKeelError(
      () => new ResidencyManager(device, { allocation: 'pool' } as never),
      ErrorCode.INVALID_ARGUMENT,
      /option 'allocation' must be one of 'queue-ordered', 'buffers', got "pool"/,
    );
    await expectKeelError(
      () => new ResidencyManager(device, 'big' as never),
      ErrorCode.INVALID_ARGUMENT,
      /ResidencyManager: options must be an object, got "big"/,
    );
  });

  it('plain-array data: every element must be a number the dtype holds exactly', async () => {
    await expectKeelError(
      () => Tensor.fromHost('f32', [2], [1, 'a'] as unknown as number[]),
      ErrorCode.INVALID_ARGUMENT,
      /element 1 of the data .* must be a number, got "a"/,
    );
    await expectKeelError(
      () => Tensor.fromHost('f32', [3], [1, undefined, 2] as unknown as number[]),
      ErrorCode.INVALID_ARGUMENT,
      /element 1 .*got undefined/,
    );
    await expectKeelError(
      () => Tensor.fromHost('f64', [2], [1, 2n] as unknown as number[]),
      ErrorCode.INVALID_ARGUMENT,
      /element 1 .*got 2n/,
    );
    // A sparse array's hole is not a number either.
    await expectKeelError(
      () => Tensor.fromHost('f32', [2], new Array<number>(2).fill(1, 0, 1)),
      ErrorCode.INVALID_ARGUMENT,
      /element 1 .*got undefined/,
    );
    await expectKeelError(
      () => Tensor.fromHost('u8', [2], [1, 300]),
      ErrorCode.INVALID_ARGUMENT,
      /element 1 .*integer in \[0, 255\] \(u8\), got 300/,
    );
    await expectKeelError(
      () => Tensor.fromHost('i32', [2], [1.5, 2]),
      ErrorCode.INVALID_ARGUMENT,
      /element 0 .*integer .*got 1.5/,
    );
    await expectKeelError(() => Tensor.fromHost('u32', [1], [-1]), ErrorCode.INVALID_ARGUMENT, /got -1/);
    const t = Tensor.zeros('i8', [2]);
    await expectKeelError(() => t.write([1, 128]), ErrorCode.INVALID_ARGUMENT, /element 1/);
    await expectKeelError(
      () => Tensor.fromHost('f32', [2], { length: 2 } as unknown as number[]),
      ErrorCode.INVALID_ARGUMENT,
      /got an object \{ length \}/,
    );
    // Floats take any number, NaN and infinities included.
    const f = Tensor.fromHost('f32', [3], [Number.NaN, Number.POSITIVE_INFINITY, 0.5]);
    expect(Number.isNaN((await f.toHost())[0])).toBe(true);
    expect([...(await Tensor.fromHost('u32', [1], [2 ** 32 - 1]).toHost())]).toEqual([2 ** 32 - 1]);
  });

  it('reading a tensor without contents', async () => {
    const t = Tensor.empty('i32', [4], { label: 'fresh' });
    await expectKeelError(() => t.toHost(), ErrorCode.FAILED_PRECONDITION, /'fresh'.*no contents/);
    await expectKeelError(() => m.acquire(t, 'read'), ErrorCode.FAILED_PRECONDITION, /no contents/);
    m.acquire(t, 'write').release(Fence.empty); // a write-only lease is fine
  });

  it('device copy: dtype or shape mismatch', async () => {
    const a = Tensor.zeros('f32', [4]);
    await expectKeelError(
      () => m.copy(a, Tensor.zeros('i32', [4])),
      ErrorCode.INVALID_ARGUMENT,
      /dtype mismatch/,
    );
    await expectKeelError(
      () => m.copy(a, Tensor.zeros('f32', [2, 2])),
      ErrorCode.INVALID_ARGUMENT,
      /shape mismatch/,
    );
    await expectKeelError(() => m.copy(a, a), ErrorCode.INVALID_ARGUMENT, /same tensor/);
  });

  it('leases: bad access, conflicts, double release, non-fence', async () => {
    const t = Tensor.zeros('f32', [4], { label: 't' });
    await expectKeelError(() => m.acquire(t, 'modify' as 'read'), ErrorCode.INVALID_ARGUMENT, /access/);
    await expectKeelError(() => m.acquire({} as Tensor, 'read'), ErrorCode.INVALID_ARGUMENT, /not a Tensor/);
    const reader = m.acquire(t, 'read');
    await expectKeelError(() => m.acquire(t, 'write'), ErrorCode.FAILED_PRECONDITION, /exclusive access/);
    const reader2 = m.acquire(t, 'read'); // readers share
    reader2.release(Fence.empty);
    await expectKeelError(
      () => reader.release('soon' as unknown as Fence),
      ErrorCode.INVALID_ARGUMENT,
      /Fence/,
    );
    reader.release(Fence.empty);
    await expectKeelError(
      () => reader.release(Fence.empty),
      ErrorCode.FAILED_PRECONDITION,
      /already released/,
    );
    const writer = m.acquire(t, 'write');
    await expectKeelError(() => m.acquire(t, 'read'), ErrorCode.FAILED_PRECONDITION, /open write lease/);
    await expectKeelError(() => t.toHost(), ErrorCode.FAILED_PRECONDITION, /open write lease/);
    await expectKeelError(() => t.write([1, 2, 3, 4]), ErrorCode.FAILED_PRECONDITION, /open write lease/);
    await expectKeelError(() => m.evict(t), ErrorCode.FAILED_PRECONDITION, /open lease/);
    writer.release(Fence.empty);
    await expectKeelError(
      () =>
        m.acquireAll([
          { tensor: t, access: 'read' },
          { tensor: t, access: 'write' },
        ]),
      ErrorCode.INVALID_ARGUMENT,
      /appears twice/,
    );
  });

  it('budget: a tensor or a batch larger than the budget, and leases holding it all', async () => {
    const big = Tensor.zeros('u8', [5000], { label: 'big' });
    await expectKeelError(
      () => m.acquire(big, 'read'),
      ErrorCode.RESOURCE_EXHAUSTED,
      /'big'.*4096-byte budget/,
    );
    const a = Tensor.zeros('u8', [3000]);
    const b = Tensor.zeros('u8', [3000]);
    await expectKeelError(
      () =>
        m.acquireAll([
          { tensor: a, access: 'read' },
          { tensor: b, access: 'read' },
        ]),
      ErrorCode.RESOURCE_EXHAUSTED,
      /batch needs 6000 bytes/,
    );
    const la = m.acquire(a, 'read');
    await expectKeelError(() => m.acquire(b, 'read'), ErrorCode.RESOURCE_EXHAUSTED, /held by leased copies/);
    // A batch that fails halfway cancels the leases it took: `c`'s write lease changes nothing.
    const c = Tensor.fromHost('u8', [96], new Uint8Array(96).fill(1));
    await expectKeelError(
      () =>
        m.acquireAll([
          { tensor: c, access: 'write' },
          { tensor: b, access: 'read' },
        ]),
      ErrorCode.RESOURCE_EXHAUSTED,
    );
    expect(c.version).toBe(1);
    expect((await c.toHost()).every((v) => v === 1)).toBe(true);
    la.release(Fence.empty);
    m.acquire(b, 'read').release(Fence.empty); // evicts a
    expect(a.locations).toEqual([]);
    await expectKeelError(
      () => m.stream(big, { chunkBytes: 4097 }, () => Fence.empty),
      ErrorCode.INVALID_ARGUMENT,
      /multiple of 4/,
    );
    await expectKeelError(
      () => m.stream(big, { chunkBytes: 8192 }, () => Fence.empty),
      ErrorCode.RESOURCE_EXHAUSTED,
      /exceed the 4096-byte budget/,
    );
    await expectKeelError(
      () => m.stream(big, {}, () => 'done' as unknown as Fence),
      ErrorCode.INVALID_ARGUMENT,
      /must return a Fence/,
    );
  });

  it('manager options', async () => {
    await expectKeelError(() => new ResidencyManager({} as never), ErrorCode.INVALID_ARGUMENT, /Keel Device/);
    await expectKeelError(
      () => new ResidencyManager(device, { budgetBytes: 0 }),
      ErrorCode.INVALID_ARGUMENT,
      /budgetBytes/,
    );
    await expectKeelError(
      () => new ResidencyManager(device, { usage: 4 }),
      ErrorCode.INVALID_ARGUMENT,
      /TRANSFER/,
    );
    await expectKeelError(
      () => new ResidencyManager(device, { allocation: 'magic' as 'buffers' }),
      ErrorCode.INVALID_ARGUMENT,
      /allocation/,
    );
  });

  it('a failed producer: readers see ABORTED, a write-only lease recovers the tensor', async () => {
    const t = Tensor.empty('u32', [8], { label: 'failing' });
    const w = m.acquire(t, 'write');
    const failed = signalOf(device);
    failed.fail(new Error('kernel exploded'));
    w.release(failed);
    await expectKeelError(() => t.toHost(), ErrorCode.ABORTED);
    const w2 = m.acquire(t, 'write');
    expect(w2.wait.query()).toBe('signaled');
    const done = signalOf(device);
    device.queueFill(ANY, w2.wait, done, w2.ref, 9, 4);
    w2.release(done);
    expect(Array.from(await t.toHost())).toEqual(new Array(8).fill(9));
  });

  it('a disposed manager refuses work; dispose writes back what only it held', async () => {
    const local = new ResidencyManager(device);
    const t = Tensor.empty('f32', [4]);
    const w = local.acquire(t, 'write');
    const done = signalOf(device);
    device.queueFill(ANY, w.wait, done, w.ref, 0x40000000, 4); // 2.0f
    const open = local.acquire(Tensor.zeros('u8', [4]), 'read');
    w.release(done);
    await expectKeelError(() => local.dispose(), ErrorCode.FAILED_PRECONDITION, /leased/);
    open.release(Fence.empty);
    await local.dispose();
    expect(t.isOnHost).toBe(true);
    expect(Array.from(await t.toHost())).toEqual([2, 2, 2, 2]);
    await expectKeelError(() => local.acquire(t, 'read'), ErrorCode.FAILED_PRECONDITION, /disposed/);
  });
});
