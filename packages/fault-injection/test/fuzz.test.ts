/**
 * A fuzz of the public API's arguments (fast-check): every entry point is called with arbitrary values
 * (`fc.anything()`) mixed with near-valid ones (boundary numbers, wrong types, objects of the right
 * shape with one bad field, live and destroyed buffers), and must either succeed or throw a KeelError
 * (`KeelError.is`): never a raw error, a crash (uncaught exception, unhandled rejection) or a hang.
 * Queue operations that are accepted must settle their signal (bounded). Run counts stay modest; a
 * failure prints fast-check's seed and the shrunk counterexample.
 */
import { QueueAllocator, TlsfPool } from '@keel/allocator';
import { createCpuDevice } from '@keel/device-cpu';
import { createWebGpuDevice } from '@keel/device-webgpu';
import { Fence, KeelError, TimelineSemaphore, waitAll, waitAny } from '@keel/fence';
import { type Buffer, type Device, type Executable, type ExecutableSource, slotRef } from '@keel/hal';
import { Scheduler, targetsOf } from '@keel/scheduler';
import { ResidencyManager, Tensor } from '@keel/tensor-residency';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADD_CONST, ADD_CONST_WGSL, backends, KERNELS, title } from './backends';
import { bounded, failOnUncapturedGpuErrors, HANG_MS, outcome, STORAGE, watchProcess } from './helpers';

const all = await backends();
failOnUncapturedGpuErrors();
const webgpu = all.find((b) => b.name === 'webgpu');

/** Runs `call`; a thrown value that is not a KeelError fails with `what` and the arguments. */
function keelOrSuccess<T>(what: string, args: unknown, call: () => T): T | undefined {
  try {
    return call();
  } catch (error) {
    if (KeelError.is(error)) return undefined;
    throw new Error(`${what}(${safe(args)}) threw a raw ${describeError(error)}`);
  }
}

/** The same for promises, bounded: a hang fails. */
async function keelOrSuccessAsync<T>(
  what: string,
  args: unknown,
  call: () => Promise<T>,
): Promise<T | undefined> {
  let promise: Promise<T>;
  try {
    promise = call();
  } catch (error) {
    if (KeelError.is(error)) return undefined;
    throw new Error(`${what}(${safe(args)}) threw a raw ${describeError(error)} synchronously`);
  }
  try {
    return await bounded(promise, `${what}(${safe(args)})`);
  } catch (error) {
    if (KeelError.is(error)) return undefined;
    throw new Error(`${what}(${safe(args)}) rejected with a raw ${describeError(error)}`);
  }
}

function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : `non-error ${safe(error)}`;
}

function safe(value: unknown): string {
  try {
    return fc.stringify(value).slice(0, 300);
  } catch {
    return typeof value;
  }
}

/**
 * Integers at and around the boundaries, plus non-integers and wrong types. Sizes between 16 MiB and
 * 2^32 - 2 are left out: WebGPU on lavapipe would really allocate them (up to 4 GiB of host memory).
 */
const nearNumber = fc.oneof(
  fc.constantFrom(
    0,
    1,
    4,
    16,
    64,
    256,
    -1,
    -4,
    1.5,
    Number.NaN,
    Infinity,
    -Infinity,
    2 ** 32,
    2 ** 32 + 1,
    2 ** 53,
    '4',
    null,
    undefined,
  ),
  fc.integer({ min: -8, max: 2048 }),
);
const notHuge = (v: unknown): boolean => !(typeof v === 'number' && v > 1 << 24 && v < 2 ** 32 - 1);
const near = fc
  .oneof({ arbitrary: nearNumber, weight: 3 }, { arbitrary: fc.anything(), weight: 1 })
  .filter(notHuge);
const mask = fc.oneof(
  fc.constantFrom(1, 2, 3, 0xffffffff, 0, -1, 2 ** 32, 2 ** 32 + 1, 2 ** 33, 0.5, '1'),
  fc.anything(),
);
const patternLength = fc.oneof(fc.constantFrom(1, 2, 4, 3, 0, 8, '4'), fc.anything());
const hostView = fc.oneof(
  fc.integer({ min: 0, max: 300 }).map((n) => new Uint8Array(n)),
  fc.integer({ min: 0, max: 64 }).map((n) => new Float32Array(n)),
  fc.constant(new ArrayBuffer(16)),
  fc.constant([1, 2, 3]),
  fc.anything(),
);

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => {
  unhandled.push(reason);
};
beforeAll(() => {
  process.on('unhandledRejection', onUnhandled);
  process.on('uncaughtException', onUnhandled);
});
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
  process.off('uncaughtException', onUnhandled);
});

describe('fuzz: fence', () => {
  it('TimelineSemaphore, Fence, waitAll and waitAny: a KeelError or success', async () => {
    await fc.assert(
      fc.asyncProperty(near, near, near, fc.anything(), async (initial, v, w, options) => {
        const s = keelOrSuccess(
          'new TimelineSemaphore',
          [initial, options],
          () => new TimelineSemaphore(initial as number, options as never),
        );
        const t = new TimelineSemaphore(0);
        keelOrSuccess('signal', v, () => t.signal(v as number));
        keelOrSuccess('fail', w, () => t.fail(w));
        const f = keelOrSuccess('Fence.of', [v], () => Fence.of({ semaphore: s ?? t, value: v as number }));
        keelOrSuccess('Fence.of(junk)', options, () => Fence.of(options as never));
        keelOrSuccess('Fence.join', [f, options], () => Fence.join(f ?? Fence.empty, options as never));
        keelOrSuccess('fence.with', [w, options], () =>
          (f ?? Fence.empty).with(options as never, w as number),
        );
        keelOrSuccess('fence.query', [], () => (f ?? Fence.empty).query());
        // Waits either poll (timeoutMs 0) or wait for a value already reached, so each must settle.
        const timeout = { timeoutMs: 0 };
        await keelOrSuccessAsync('semaphore.wait', [options], () => t.wait(0, options as never));
        await keelOrSuccessAsync('semaphore.wait', [w], () => t.wait(w as number, timeout));
        await keelOrSuccessAsync('fence.wait', [options], () => (f ?? Fence.empty).wait(timeout));
        await keelOrSuccessAsync('fence.wait', [options], () => Fence.empty.wait(options as never));
        await keelOrSuccessAsync('waitAll', [options], () => waitAll(options as never, timeout));
        await keelOrSuccessAsync('waitAny', [options], () => waitAny(options as never, timeout));
        await keelOrSuccessAsync('waitAny', [options], () => waitAny([Fence.empty], options as never));
      }),
      {
        numRuns: 300,
        examples: [
          [0, 2 ** 53, -1, null],
          [1, 1, { toString: 0 }, { timeoutMs: -1 }],
          [Number.NaN, '1', 0, { signal: {} }],
        ],
      },
    );
    expect(unhandled).toEqual([]);
  });
});

describe('fuzz: createCpuDevice', () => {
  it('options: a KeelError or a device that works and is destroyed', async () => {
    const option = fc.record(
      {
        mode: fc.oneof(fc.constantFrom('sync', 'task', 'tpu', ''), fc.anything()),
        // No large valid counts: a valid 32 × 256 would start 8 192 threads.
        queues: fc.oneof(
          fc.constantFrom(0, 1, 2, 33, -1, 1.5, Number.NaN, '2', 2 ** 32 + 1, null),
          fc.string(),
          fc.object(),
        ),
        workersPerQueue: fc.oneof(
          fc.constantFrom(0, 1, -1, 0.5, '1', Number.NaN, 257, null),
          fc.string(),
          fc.object(),
        ),
        label: fc.anything(),
        slabSize: near,
        ringCapacity: near,
        bogus: fc.anything(),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(fc.oneof(option, fc.anything(), fc.constantFrom('sync', 'task')), async (options) => {
        const device = keelOrSuccess('createCpuDevice', options, () => createCpuDevice(options as never));
        if (device === undefined) return;
        try {
          const b = device.createBuffer({ byteLength: 16, usage: STORAGE });
          const s = device.createSemaphore(0);
          device.queueFill(1, Fence.empty, Fence.of({ semaphore: s, value: 1 }), { buffer: b }, 1, 4);
          expect(await outcome(s, 1, 'fill on a fuzzed device')).toBe('ok');
        } finally {
          await bounded(device.destroy(), 'destroy');
        }
      }),
      {
        numRuns: 40,
        examples: [[null], ['sync'], [{ mode: { toString: 0 } }], [{ mode: 'sync', queues: 2 ** 32 + 1 }]],
      },
    );
    expect(unhandled).toEqual([]);
  });
});

/** Fuzz of one device: buffers, executables, command buffers, queue operations, residency, scheduler. */
function deviceFuzz(name: string, available: boolean, reason: string, create: () => Promise<Device>): void {
  describe.skipIf(!available)(
    `fuzz: device operations on ${available ? name : `${name} (${reason})`}`,
    () => {
      let device: Device;
      let exe: Executable;
      /** Executables whose export's `workgroupCount` is not a function, throws, or returns junk (where accepted). */
      const weird: Executable[] = [];
      let live: Buffer;
      let destroyed: Buffer;
      beforeAll(async () => {
        device = await create();
        const base: ExecutableSource =
          device.info.backend === 'cpu'
            ? { format: 'js-module', url: KERNELS, exports: [ADD_CONST] }
            : { format: 'wgsl', code: ADD_CONST_WGSL, exports: [ADD_CONST] };
        exe = await device.createExecutable(base);
        const counts: unknown[] = [
          5,
          'x',
          () => {
            throw new Error('workgroupCount exploded');
          },
          () => [-1, 0, 0],
          () => 'x',
          () => [1.5, 1, 1],
        ];
        for (const workgroupCount of counts) {
          const source = { ...base, exports: [{ ...ADD_CONST, workgroupCount }] };
          const created = await keelOrSuccessAsync('createExecutable', workgroupCount, () =>
            device.createExecutable(source as never),
          );
          if (created !== undefined) weird.push(created);
        }
        live = device.createBuffer({ byteLength: 1024, usage: STORAGE });
        destroyed = device.createBuffer({ byteLength: 64, usage: STORAGE });
        destroyed.destroy();
      });
      afterAll(async () => {
        await device?.destroy();
      });

      const buffer = (): fc.Arbitrary<unknown> =>
        fc.oneof(fc.constant(live), fc.constant(destroyed), fc.anything());
      const ref = (): fc.Arbitrary<unknown> =>
        fc.oneof(
          fc.record({ buffer: buffer(), offset: near, length: near }, { requiredKeys: ['buffer'] }),
          fc.record({ slot: near, offset: near }, { requiredKeys: ['slot'] }),
          buffer(),
          fc.anything(),
        );

      it('createBuffer: a KeelError or a live buffer', () => {
        const params = fc.oneof(
          fc.record(
            {
              byteLength: fc.oneof(near, fc.constant(2 ** 32 - 1)),
              usage: fc.oneof(fc.constantFrom(STORAGE, 0, 1 << 10, -1, 2 ** 32 + 7), fc.anything()),
              memoryType: fc.oneof(fc.constantFrom(1, 2, 0, 1 << 9, 'x'), fc.anything()),
              label: fc.anything(),
            },
            { requiredKeys: ['byteLength'] },
          ),
          fc.anything(),
        );
        fc.assert(
          fc.property(params, (p) => {
            const b = keelOrSuccess('createBuffer', p, () => device.createBuffer(p as never));
            if (b !== undefined) {
              expect(b.byteLength).toBeGreaterThanOrEqual(0);
              b.destroy();
            }
          }),
          {
            numRuns: 150,
            examples: [
              [{ byteLength: 2 ** 32 - 1, usage: STORAGE }],
              [{ byteLength: 64, usage: 1 << 10 }],
              [{ byteLength: 64, usage: STORAGE, memoryType: 'x' }],
              [null],
            ],
          },
        );
      });

      it('createExecutable: a KeelError or an executable', async () => {
        const source = fc.oneof(
          fc.record(
            {
              format: fc.oneof(fc.constantFrom('js-module', 'wgsl', 'spirv'), fc.anything()),
              url: fc.oneof(fc.constant(KERNELS), fc.constant(new URL('./nope.js', KERNELS)), fc.anything()),
              code: fc.oneof(fc.constant('fn x( {'), fc.anything()),
              exports: fc.oneof(
                fc.constant([ADD_CONST]),
                fc.array(
                  fc.record({
                    name: fc.oneof(fc.constant('add_const'), fc.anything()),
                    bindingCount: near,
                    constantCount: near,
                    workgroupSize: fc.oneof(
                      fc.constant([64, 1, 1]),
                      fc.array(near, { maxLength: 4 }),
                      fc.anything(),
                    ),
                    workgroupCount: fc.anything(),
                  }),
                  { maxLength: 2 },
                ),
                fc.anything(),
              ),
            },
            { requiredKeys: ['format'] },
          ),
          fc.anything(),
        );
        await fc.assert(
          fc.asyncProperty(source, async (s) => {
            await keelOrSuccessAsync('createExecutable', s, () => device.createExecutable(s as never));
          }),
          { numRuns: 40, examples: [[null], [{ format: 'js-module', url: 5, exports: [ADD_CONST] }]] },
        );
      });

      it('command buffers: options and every record call take a KeelError or succeed', () => {
        const call = fc.oneof(
          fc.tuple(fc.constant('begin')),
          fc.tuple(fc.constant('end')),
          fc.tuple(fc.constant('barrier')),
          fc.tuple(fc.constant('fill'), ref(), near, patternLength),
          fc.tuple(fc.constant('update'), hostView, ref()),
          fc.tuple(fc.constant('copy'), ref(), ref()),
          fc.tuple(
            fc.constant('dispatch'),
            fc.oneof(fc.constant('exe'), fc.constant('weird'), fc.anything()),
            fc.oneof(fc.constant('add_const'), fc.constant(0), fc.anything()),
            fc.oneof(
              fc.record({
                workgroupCount: fc.array(near, { maxLength: 4 }),
                constants: fc.array(near, { maxLength: 3 }),
                bindings: fc.array(ref(), { maxLength: 2 }),
              }),
              fc.record({
                workload: fc.oneof(fc.array(near, { maxLength: 4 }), fc.constant([-5])),
                constants: fc.array(near, { maxLength: 3 }),
                bindings: fc.array(ref(), { maxLength: 2 }),
              }),
              fc.record({
                indirect: ref(),
                constants: fc.array(near, { maxLength: 3 }),
                bindings: fc.array(ref(), { maxLength: 2 }),
              }),
              fc.anything(),
            ),
            fc.nat(),
          ),
          fc.tuple(fc.constant('beginDebugGroup'), fc.anything()),
          fc.tuple(fc.constant('endDebugGroup')),
        );
        const options = fc.oneof(
          fc.record(
            {
              mode: fc.oneof(fc.constantFrom('one-shot', 'reusable', 'many'), fc.anything()),
              bindingCapacity: near,
              affinity: mask,
              validation: fc.anything(),
            },
            { requiredKeys: [] },
          ),
          fc.anything(),
        );
        fc.assert(
          fc.property(options, fc.array(call, { maxLength: 8 }), (o, calls) => {
            const cb = keelOrSuccess('createCommandBuffer', o, () => device.createCommandBuffer(o as never));
            if (cb === undefined) return;
            for (const c of calls) {
              const [method, ...args] = c as [string, ...unknown[]];
              if (method === 'dispatch') {
                const [target, entry, config, pick] = args as [unknown, unknown, unknown, number];
                const executable =
                  target === 'exe' ? exe : target === 'weird' ? (weird[pick % weird.length] ?? exe) : target;
                keelOrSuccess('dispatch', [target, entry, config], () =>
                  cb.dispatch(executable as never, entry as never, config as never),
                );
              } else {
                const fn = (cb as unknown as Record<string, (...a: unknown[]) => unknown>)[method];
                keelOrSuccess(method, args, () => fn?.apply(cb, args));
              }
            }
          }),
          {
            numRuns: 150,
            examples: [
              [null, []],
              [{ mode: { toString: 0 } }, []],
              [
                {},
                [
                  ['begin'],
                  ['dispatch', 'exe', 'add_const', { workload: [-5], constants: [1, 4], bindings: [] }, 0],
                ],
              ],
              [
                {},
                [
                  ['begin'],
                  ['dispatch', 'weird', 'add_const', { workload: [64], constants: [1, 4], bindings: [] }, 0],
                ],
              ],
              [
                {},
                [
                  ['begin'],
                  ['dispatch', 'weird', 'add_const', { workload: [64], constants: [1, 4], bindings: [] }, 2],
                ],
              ],
            ],
          },
        );
      });

      it('queue operations: a KeelError at the call, or a signal that settles', async () => {
        const op = fc.oneof(
          fc.tuple(fc.constant('queueFill'), ref(), near, patternLength),
          fc.tuple(fc.constant('queueUpdate'), hostView, ref()),
          fc.tuple(fc.constant('queueWrite'), hostView, ref()),
          fc.tuple(fc.constant('queueRead'), ref(), hostView),
          fc.tuple(fc.constant('queueCopy'), ref(), ref()),
          fc.tuple(fc.constant('queueBarrier')),
          fc.tuple(
            fc.constant('queueHostCall'),
            fc.oneof(
              fc.constant(() => {}),
              fc.constant(async () => Promise.reject(new Error('host call rejected'))),
              fc.anything(),
            ),
          ),
          fc.tuple(
            fc.constant('queueAlloca'),
            fc.oneof(fc.record({ usage: fc.oneof(fc.constant(STORAGE), near) }), fc.anything()),
            near,
            fc.oneof(fc.record({ pool: fc.constantFrom('tlsf', 'ring', 'passthrough', 'x') }), fc.anything()),
          ),
          fc.tuple(fc.constant('queueDealloca'), buffer()),
          fc.tuple(
            fc.constant('queueExecute'),
            fc.oneof(fc.constant([]), fc.array(fc.anything(), { maxLength: 2 })),
            fc.oneof(fc.constant(undefined), fc.anything()),
          ),
          fc.tuple(fc.constant('flush')),
        );
        const fenceKind = fc.constantFrom('empty', 'reached', 'junk-object', 'number');
        await fc.assert(
          fc.asyncProperty(op, mask, fenceKind, fenceKind, async (c, affinity, waitKind, signalKind) => {
            const [method, ...args] = c as [string, ...unknown[]];
            const reached = device.createSemaphore(0);
            reached.signal(1);
            const fence = (kind: string): unknown =>
              kind === 'empty'
                ? Fence.empty
                : kind === 'reached'
                  ? Fence.of({ semaphore: reached, value: 1 })
                  : kind === 'number'
                    ? 1
                    : { timepoints: [] };
            const signal = device.createSemaphore(0);
            const signalFence =
              signalKind === 'junk-object' || signalKind === 'number'
                ? fence(signalKind)
                : Fence.of({ semaphore: signal, value: 1 });
            const fn = (device as unknown as Record<string, (...a: unknown[]) => unknown>)[method] as (
              ...a: unknown[]
            ) => unknown;
            const full = method === 'flush' ? [affinity] : [affinity, fence(waitKind), signalFence, ...args];
            let accepted = false;
            const result = keelOrSuccess(method, full, () => {
              const r = fn.apply(device, full);
              accepted = true;
              return r;
            });
            if (accepted && method !== 'flush' && signalFence instanceof Fence) {
              await outcome(signal, 1, `${method}(${safe(full)})`);
              if (method === 'queueAlloca' && result !== undefined) {
                const d = device.createSemaphore(0);
                device.queueDealloca(1, signalFence, Fence.of({ semaphore: d, value: 1 }), result as Buffer);
                await outcome(d, 1, 'dealloca of a fuzzed alloca');
              }
            }
          }),
          {
            numRuns: 200,
            examples: [
              [['queueBarrier'], { toString: '' }, 'empty', 'empty'],
              [['queueBarrier'], 2 ** 32 + 1, 'empty', 'empty'],
              [['queueFill', { buffer: null }, 0, 4], 1, 'empty', 'empty'],
            ],
          },
        );
        expect(unhandled).toEqual([]);
      });

      it('Tensor.fromHost and ResidencyManager: a KeelError or success', async () => {
        const dtype = fc.oneof(fc.constantFrom('f32', 'u8', 'i32', 'f16', 'x'), fc.anything());
        const shape = fc.oneof(fc.array(near, { maxLength: 3 }), fc.constant([2]), fc.anything());
        const data = fc.oneof(
          fc.constant(new Float32Array(2)),
          fc.constant([1, 'a']),
          fc.constant([1, 2]),
          fc.array(fc.anything(), { maxLength: 3 }),
          hostView,
        );
        const managerOptions = fc.oneof(
          fc.record(
            {
              budgetBytes: near,
              affinity: mask,
              allocation: fc.oneof(fc.constantFrom('queue-ordered', 'buffers', 'x'), fc.anything()),
              usage: near,
              label: fc.anything(),
            },
            { requiredKeys: [] },
          ),
          fc.anything(),
        );
        const access = fc.oneof(fc.constantFrom('read', 'write', 'readwrite', 'rw'), fc.anything());
        await fc.assert(
          fc.asyncProperty(dtype, shape, data, managerOptions, access, async (d, s, h, o, a) => {
            const tensor = keelOrSuccess('Tensor.fromHost', [d, s, h], () =>
              Tensor.fromHost(d as never, s as never, h as never),
            );
            const manager = keelOrSuccess(
              'new ResidencyManager',
              o,
              () => new ResidencyManager(device, o as never),
            );
            if (tensor === undefined || manager === undefined) {
              manager?.dispose();
              return;
            }
            const lease = keelOrSuccess('acquire', a, () => manager.acquire(tensor, a as never));
            if (lease !== undefined) {
              await keelOrSuccessAsync('lease.wait', [], () => lease.wait.wait({ timeoutMs: HANG_MS }));
              lease.release(lease.wait);
            }
            await keelOrSuccessAsync('toHost', [], () => tensor.toHost());
            await keelOrSuccessAsync('dispose', [], async () => manager.dispose());
          }),
          {
            numRuns: 60,
            examples: [
              ['f32', [2], [1, 'a'], null, 'read'],
              ['f32', [2], new Float32Array(2), {}, { toString: 0 }],
            ],
          },
        );
        expect(unhandled).toEqual([]);
      });

      it('QueueAllocator and Scheduler: a KeelError or success', async () => {
        await fc.assert(
          fc.asyncProperty(
            fc.anything(),
            near,
            near,
            mask,
            fc.anything(),
            fc.anything(),
            async (options, size, alignment, affinity, op, submitOptions) => {
              const allocator = keelOrSuccess(
                'new QueueAllocator',
                options,
                () =>
                  new QueueAllocator(
                    new TlsfPool(
                      { createSlab: (n: number) => new ArrayBuffer(n), destroySlab: () => {} },
                      { budget: 1 << 20 },
                    ),
                    options as never,
                  ),
              );
              if (allocator !== undefined) {
                const s = new TimelineSemaphore(0);
                const a = keelOrSuccess('alloca', [affinity, size, alignment], () =>
                  allocator.alloca(
                    affinity as number,
                    Fence.empty,
                    Fence.of({ semaphore: s, value: 1 }),
                    size as number,
                    { alignment: alignment as number },
                  ),
                );
                if (a !== undefined) await outcome(s, 1, 'fuzzed alloca');
                allocator.destroy();
              }
              const scheduler = keelOrSuccess(
                'new Scheduler',
                submitOptions,
                () => new Scheduler(targetsOf(device), submitOptions as never),
              );
              if (scheduler === undefined) return;
              const signal = device.createSemaphore(0);
              const ops = [
                op,
                { kind: 'barrier' },
                { kind: 'fill', target: { buffer: live }, pattern: size, patternLength: 4 },
                { kind: 'host-call', callback: op },
              ];
              for (const o of ops) {
                keelOrSuccess('scheduler.submit', [o, submitOptions], () =>
                  scheduler.submit(o as never, submitOptions as never),
                );
              }
              let accepted = false;
              keelOrSuccess('scheduler.submit', [affinity], () => {
                scheduler.submit(
                  { kind: 'barrier' },
                  { affinity: affinity as number, signalFence: Fence.of({ semaphore: signal, value: 1 }) },
                );
                accepted = true;
              });
              if (accepted) await outcome(signal, 1, 'scheduled barrier');
              keelOrSuccess('slotRef', size, () => slotRef(size as number));
            },
          ),
          {
            numRuns: 100,
            examples: [
              [null, 0, 0, 1, null, null],
              [{}, 64, 3, 2 ** 32 + 1, { kind: 'fill' }, {}],
            ],
          },
        );
        expect(unhandled).toEqual([]);
      });
    },
  );
}

for (const backend of all) {
  deviceFuzz(backend.name, backend.available, backend.reason, () => backend.create());
}

describe.skipIf(webgpu === undefined || !webgpu.available)(
  `fuzz: createWebGpuDevice${webgpu ? ` on ${title(webgpu)}` : ''}`,
  () => {
    it('options: a KeelError or a device that is destroyed', async () => {
      const options = fc.oneof(
        fc.record(
          {
            device: fc.oneof(fc.constant({}), fc.anything()),
            queueCount: fc.oneof(fc.constantFrom(0, 1, 2, 33, -1, 1.5, '2'), fc.anything()),
            transientBudget: near,
            transientSlabSize: near,
            bindGroupCacheSize: near,
            tableCacheSize: near,
            label: fc.anything(),
            onUncapturedError: fc.anything(),
            bogus: fc.anything(),
          },
          { requiredKeys: [] },
        ),
        fc.anything(),
      );
      const { unhandled: raw } = await watchProcess(() =>
        fc.assert(
          fc.asyncProperty(options, async (o) => {
            const device = await keelOrSuccessAsync('createWebGpuDevice', o, () =>
              createWebGpuDevice(o as never),
            );
            await device?.destroy();
          }),
          { numRuns: 25, examples: [[null], [{ device: {} }], [{ transientBudget: -5 }], ['x']] },
        ),
      );
      expect(raw).toEqual([]);
    });
  },
);
