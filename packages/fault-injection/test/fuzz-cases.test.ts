/**
 * The arguments the fuzz (fuzz.test.ts) found raw errors with, one test each, so that each failure
 * names its bug and turns green with its fix: `null` options, objects whose `toString` is not callable
 * (messages must not call `String(v)`: describeValue), exports whose `workgroupCount` is not a function
 * or throws. Each must be a KeelError at the call (or, for `fail`, a stored KeelError), never a raw
 * TypeError.
 */
import { QueueAllocator, TlsfPool } from '@keel/allocator';
import { createCpuDevice } from '@keel/device-cpu';
import { createWebGpuDevice } from '@keel/device-webgpu';
import { ErrorCode, Fence, KeelError, TimelineSemaphore } from '@keel/fence';
import type { Device, ExecutableSource } from '@keel/hal';
import { Scheduler, targetsOf } from '@keel/scheduler';
import { ResidencyManager, Tensor } from '@keel/tensor-residency';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADD_CONST, ADD_CONST_WGSL, backends, KERNELS, title } from './backends';
import { bounded, failOnUncapturedGpuErrors, STORAGE } from './helpers';

const all = await backends();
failOnUncapturedGpuErrors();

const badToString = { toString: 0 };

/** Asserts `call` throws a KeelError (any code unless given), not a raw error, and does not succeed. */
function expectKeelThrow(call: () => unknown, code?: ErrorCode): void {
  let thrown: unknown;
  try {
    call();
  } catch (error) {
    thrown = error;
  }
  expect(thrown, 'expected a KeelError, nothing was thrown').toBeDefined();
  expect(KeelError.is(thrown), `expected a KeelError, got ${String(thrown)}`).toBe(true);
  if (code !== undefined) expect((thrown as KeelError).code).toBe(code);
}

describe('fuzz cases: options that are null', () => {
  it('createCpuDevice(null) is INVALID_ARGUMENT', () => {
    expectKeelThrow(() => createCpuDevice(null as never), ErrorCode.INVALID_ARGUMENT);
  });
  it('createCpuDevice({ mode: { toString: 0 } }) is INVALID_ARGUMENT', () => {
    expectKeelThrow(() => createCpuDevice({ mode: badToString } as never), ErrorCode.INVALID_ARGUMENT);
  });
  it('new QueueAllocator(pool, null) is INVALID_ARGUMENT', () => {
    const pool = new TlsfPool({ createSlab: (n: number) => new ArrayBuffer(n), destroySlab: () => {} });
    expectKeelThrow(() => new QueueAllocator(pool, null as never), ErrorCode.INVALID_ARGUMENT);
    pool.destroy();
  });
  it('TimelineSemaphore.fail({ toString: 0 }) stores an INTERNAL KeelError with the value as cause', () => {
    const s = new TimelineSemaphore(0);
    expect(() => s.fail(badToString)).not.toThrow();
    expect(KeelError.is(s.failure, ErrorCode.INTERNAL)).toBe(true);
    expect(s.failure?.cause).toBe(badToString);
  });
  it.skipIf(!all.some((b) => b.name === 'webgpu' && b.available))(
    'createWebGpuDevice(null) rejects INVALID_ARGUMENT',
    async () => {
      let thrown: unknown;
      try {
        const device = await bounded(createWebGpuDevice(null as never), 'createWebGpuDevice(null)');
        await device.destroy();
      } catch (error) {
        thrown = error;
      }
      expect(KeelError.is(thrown, ErrorCode.INVALID_ARGUMENT), `got ${String(thrown)}`).toBe(true);
    },
  );
});

describe('fuzz cases: accepted where they must be refused (issue 15)', () => {
  it("createCpuDevice('sync') (a string, not options) is INVALID_ARGUMENT", () => {
    let made: { destroy(): Promise<void> } | undefined;
    expectKeelThrow(() => {
      made = createCpuDevice('sync' as never);
    }, ErrorCode.INVALID_ARGUMENT);
    void made?.destroy();
  });
  it("Tensor.fromHost('f32', [2], [1, 'a']) is INVALID_ARGUMENT", () => {
    expectKeelThrow(() => Tensor.fromHost('f32', [2], [1, 'a'] as never), ErrorCode.INVALID_ARGUMENT);
  });
  const webgpuHere = all.some((b) => b.name === 'webgpu' && b.available);
  it.skipIf(!webgpuHere).each([
    ['{ device: {} }', { device: {} }],
    ['{ transientBudget: -5 }', { transientBudget: -5 }],
  ])('createWebGpuDevice(%s) rejects INVALID_ARGUMENT at creation', async (_what, options) => {
    let thrown: unknown;
    try {
      const device = await bounded(createWebGpuDevice(options as never), 'createWebGpuDevice');
      await device.destroy();
    } catch (error) {
      thrown = error;
    }
    expect(KeelError.is(thrown, ErrorCode.INVALID_ARGUMENT), `got ${String(thrown)}`).toBe(true);
  });
});

describe.each(all)('fuzz cases on $name', (backend) => {
  describe.skipIf(!backend.available)(title(backend), () => {
    let device: Device;
    beforeAll(async () => {
      device = await backend.create();
    });
    afterAll(async () => {
      await device?.destroy();
    });

    it('createCommandBuffer(null) is INVALID_ARGUMENT', () => {
      expectKeelThrow(() => device.createCommandBuffer(null as never), ErrorCode.INVALID_ARGUMENT);
    });
    it('createCommandBuffer({ mode: { toString: 0 } }) is INVALID_ARGUMENT', () => {
      expectKeelThrow(
        () => device.createCommandBuffer({ mode: badToString } as never),
        ErrorCode.INVALID_ARGUMENT,
      );
    });
    it('new ResidencyManager(device, null) is INVALID_ARGUMENT', () => {
      expectKeelThrow(() => new ResidencyManager(device, null as never), ErrorCode.INVALID_ARGUMENT);
    });
    it('new Scheduler(targets, null) is INVALID_ARGUMENT', () => {
      expectKeelThrow(() => new Scheduler(targetsOf(device), null as never), ErrorCode.INVALID_ARGUMENT);
    });
    it('a queue operation with affinity { toString: "" } is INVALID_ARGUMENT', () => {
      const s = device.createSemaphore(0);
      expectKeelThrow(
        () =>
          device.queueBarrier({ toString: '' } as never, Fence.empty, Fence.of({ semaphore: s, value: 1 })),
        ErrorCode.INVALID_ARGUMENT,
      );
      expect(s.value).toBe(0);
    });
    it.each([
      ['an undefined usage bit', { byteLength: 64, usage: STORAGE | (1 << 10) }],
      ["memoryType 'x'", { byteLength: 64, usage: STORAGE, memoryType: 'x' }],
    ])('createBuffer with %s is INVALID_ARGUMENT', (_what, params) => {
      expectKeelThrow(() => device.createBuffer(params as never), ErrorCode.INVALID_ARGUMENT);
    });
    it('an affinity mask wider than 32 bits (2 ** 32 + 1) is INVALID_ARGUMENT', () => {
      const s = device.createSemaphore(0);
      expectKeelThrow(
        () => device.queueBarrier(2 ** 32 + 1, Fence.empty, Fence.of({ semaphore: s, value: 1 })),
        ErrorCode.INVALID_ARGUMENT,
      );
    });
    it('a dispatch by workload [-5] is INVALID_ARGUMENT at record time', async () => {
      const exe = await backend.addConst(device);
      const buffer = device.createBuffer({ byteLength: 256, usage: STORAGE });
      const cb = device.createCommandBuffer();
      cb.begin();
      expectKeelThrow(
        () => cb.dispatch(exe, 'add_const', { workload: [-5], constants: [1, 64], bindings: [{ buffer }] }),
        ErrorCode.INVALID_ARGUMENT,
      );
    });
    it.each([
      ['not a function', 5],
      [
        'that throws',
        () => {
          throw new Error('workgroupCount exploded');
        },
      ],
      ['that returns a string', () => 'x'],
    ])(
      'an export whose workgroupCount is %s: a KeelError at createExecutable or dispatch',
      async (_what, workgroupCount) => {
        const base: ExecutableSource =
          device.info.backend === 'cpu'
            ? { format: 'js-module', url: KERNELS, exports: [{ ...ADD_CONST, workgroupCount } as never] }
            : { format: 'wgsl', code: ADD_CONST_WGSL, exports: [{ ...ADD_CONST, workgroupCount } as never] };
        let exe: Awaited<ReturnType<Device['createExecutable']>>;
        try {
          exe = await bounded(device.createExecutable(base), 'createExecutable');
        } catch (error) {
          expect(KeelError.is(error), `createExecutable: a raw ${String(error)}`).toBe(true);
          return;
        }
        const buffer = device.createBuffer({ byteLength: 256, usage: STORAGE });
        const cb = device.createCommandBuffer();
        cb.begin();
        expectKeelThrow(() =>
          cb.dispatch(exe, 'add_const', { workload: [64], constants: [1, 64], bindings: [{ buffer }] }),
        );
      },
    );
  });
});
