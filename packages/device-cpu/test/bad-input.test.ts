/**
 * Bad input and crash regressions of issue 15 on the CPU device (both modes): nothing crashes the
 * process, bad arguments get a KeelError naming the rule, messages show values as they are.
 */
import { Fence, KeelError, TimelineSemaphore } from '@keel/fence';
import { BufferUsage } from '@keel/hal';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CpuDevice, type CpuDeviceMode, createCpuDevice } from '../dist/node/index.js';

const STORAGE = BufferUsage.DEFAULT;
const devices: CpuDevice[] = [];
const uncaught: unknown[] = [];
const onUncaught = (error: unknown): void => {
  uncaught.push(error);
};
beforeEach(() => {
  uncaught.length = 0;
  process.prependListener('uncaughtException', onUncaught);
});
afterEach(async () => {
  process.removeListener('uncaughtException', onUncaught);
  await Promise.all(devices.splice(0).map((d) => d.destroy()));
});

function device(mode: CpuDeviceMode, queues = 2): CpuDevice {
  const d = createCpuDevice({ mode, queues, workersPerQueue: 1 });
  devices.push(d);
  return d;
}

function thrown(fn: () => unknown): KeelError {
  try {
    fn();
  } catch (error) {
    if (KeelError.is(error)) return error;
    throw new Error(`not a KeelError: ${String(error)}`);
  }
  throw new Error('did not throw');
}

const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 10));

describe.each(['sync', 'task'] as const)('device-cpu %s: bad input', (mode) => {
  it('queueAlloca/queueDealloca leave a signal timepoint already passed alone (no crash)', async () => {
    const d = device(mode);
    const s = new TimelineSemaphore(5);
    const buffer = d.queueAlloca(
      1,
      Fence.empty,
      Fence.of({ semaphore: s, value: 3 }),
      { usage: STORAGE },
      64,
    );
    const host = new TimelineSemaphore(0);
    const second = d.queueAlloca(
      1,
      Fence.of({ semaphore: host, value: 1 }),
      Fence.of({ semaphore: s, value: 4 }),
      { usage: STORAGE },
      64,
    );
    host.signal(1);
    const out = new Uint8Array(64);
    const done = d.createSemaphore(0);
    d.queueRead(1, Fence.empty, Fence.of({ semaphore: done, value: 1 }), { buffer }, out);
    await done.wait(1, { timeoutMs: 5000 });
    d.queueDealloca(1, Fence.empty, Fence.of({ semaphore: s, value: 2 }), buffer);
    d.queueDealloca(1, Fence.empty, Fence.empty, second);
    await tick();
    expect(uncaught).toEqual([]);
    expect(s.value).toBe(5);
    expect(s.failure).toBeUndefined();
  });

  it('createExecutable refuses exports over the advertised maxBindings / maxConstants', async () => {
    const d = device(mode);
    const url = new URL('./fixtures/device-kernels.js', import.meta.url);
    const { maxBindings, maxConstants } = d.info.limits;
    for (const [bindingCount, constantCount, rule] of [
      [maxBindings + 1, 0, 'maxBindings'],
      [0, maxConstants + 1, 'maxConstants'],
    ] as const) {
      const error = await d
        .createExecutable({
          format: 'js-module',
          url,
          exports: [{ name: 'throws', bindingCount, constantCount }],
        })
        .catch((e: unknown) => e);
      expect(KeelError.is(error, 'INVALID_ARGUMENT')).toBe(true);
      expect((error as Error).message).toContain(rule);
    }
  });

  it('validation: false still fails a used slot without a table entry with INVALID_ARGUMENT (nothing silently skipped)', async () => {
    const d = device(mode);
    const b = d.createBuffer({ byteLength: 16, usage: STORAGE });
    for (const record of [
      (cb: ReturnType<CpuDevice['createCommandBuffer']>) => cb.fill({ slot: 1 }, 0xab, 1),
      (cb: ReturnType<CpuDevice['createCommandBuffer']>) =>
        cb.copy({ buffer: b }, { slot: 1, offset: 0, length: 16 }),
    ]) {
      const cb = d.createCommandBuffer({ bindingCapacity: 2, validation: false, mode: 'reusable' });
      cb.begin();
      record(cb);
      cb.end();
      const s = new TimelineSemaphore();
      d.queueExecute(
        1,
        Fence.empty,
        Fence.of({ semaphore: s, value: 1 }),
        [cb],
        [[{ buffer: b }, undefined]],
      );
      await expect(s.wait(1, { timeoutMs: 5000 })).rejects.toThrow();
      expect(s.failure?.code).toBe('INVALID_ARGUMENT');
      expect(s.failure?.message).toContain('binding slot 1');
      // An unused slot may stay empty.
      const fine = d.createCommandBuffer({ bindingCapacity: 2, validation: false, mode: 'reusable' });
      fine.begin();
      fine.fill({ slot: 1 }, 1, 1);
      fine.end();
      const t = new TimelineSemaphore();
      d.queueExecute(
        1,
        Fence.empty,
        Fence.of({ semaphore: t, value: 1 }),
        [fine],
        [[undefined, { buffer: b }]],
      );
      await t.wait(1, { timeoutMs: 5000 });
    }
  });

  it('refuses masks that are not 32-bit integers (2**32 + 1 is not queue 0)', () => {
    const d = device(mode);
    const s = d.createSemaphore(0);
    for (const mask of [2 ** 32 + 1, 2 ** 32, 2 ** 33, -(2 ** 31) - 1, 1.5]) {
      const e = thrown(() => d.queueBarrier(mask, Fence.empty, Fence.of({ semaphore: s, value: 1 })));
      expect(e.code).toBe('INVALID_ARGUMENT');
      expect(e.message).toContain(`got ${mask}`);
      expect(e.message).not.toContain('0x0 ');
    }
    expect(
      thrown(() => d.createBuffer({ byteLength: 4, usage: STORAGE, affinity: 2 ** 33 })).message,
    ).toMatch(/params\.affinity.*got 8589934592/);
    expect(thrown(() => d.createCommandBuffer({ affinity: 2 ** 32 + 1 })).code).toBe('INVALID_ARGUMENT');
    expect(thrown(() => d.flush(2 ** 32 + 1)).code).toBe('INVALID_ARGUMENT');
    // An int32 mask is its unsigned form: -1 is every queue.
    d.queueBarrier(-1, Fence.empty, Fence.of({ semaphore: s, value: 1 }));
    expect(s.value).toBe(1);
  });

  it('createBuffer refuses undefined usage bits and a memoryType that is not MemoryType bits', () => {
    const d = device(mode);
    expect(thrown(() => d.createBuffer({ byteLength: 4, usage: 1 << 6 })).message).toMatch(
      /params\.usage.*got 64/,
    );
    expect(
      thrown(() => d.createBuffer({ byteLength: 4, usage: STORAGE, memoryType: 'x' as unknown as number }))
        .message,
    ).toMatch(/params\.memoryType.*got "x"/);
    expect(thrown(() => d.queueAlloca(1, Fence.empty, Fence.empty, { usage: 1 << 7 }, 4)).code).toBe(
      'INVALID_ARGUMENT',
    );
    expect(
      thrown(() => d.createBuffer({ byteLength: '64' as unknown as number, usage: STORAGE })).message,
    ).toMatch(/byteLength must be a non-negative integer, got "64"/);
  });

  it('messages say what they got: a Buffer for a ref, objects, promises', () => {
    const d = device(mode);
    const b = d.createBuffer({ byteLength: 16, usage: STORAGE, label: 'b' });
    const e = thrown(() =>
      d.queueFill(1, Fence.empty, Fence.empty, b as unknown as { buffer: typeof b }, 0, 4),
    );
    expect(e.message).toMatch(
      /got a Buffer itself \(buffer 'b' \(16 bytes\)\); pass a ref \{ buffer, offset\?, length\? \}/,
    );
    expect(e.message).not.toContain('undefined is not a buffer');
    expect(thrown(() => d.queueBarrier(1, {} as Fence, Fence.empty)).message).toMatch(/got an empty object/);
    expect(
      thrown(() => d.queueHostCall(1, Fence.empty, Fence.empty, Promise.resolve() as unknown as () => void))
        .message,
    ).toMatch(/callback must be a function, got a Promise/);
    expect(
      thrown(() => d.queueFill(1, Fence.empty, Fence.empty, { buffer: b }, '64' as unknown as number, 1))
        .message,
    ).toMatch(/pattern "64"/);
    expect(
      thrown(() => d.queueAlloca(1, Fence.empty, Fence.empty, { usage: STORAGE }, '64' as unknown as number))
        .message,
    ).toMatch(/size must be an integer .*got "64"/);
    expect(
      thrown(() =>
        d.queueRead(1, Fence.empty, Fence.empty, { buffer: b }, { length: 4 } as unknown as Uint8Array),
      ).message,
    ).toMatch(/got an object \{ length \}/);
  });
});

describe('createCpuDevice options', () => {
  it('a string is not options (createCpuDevice("sync") made a task device)', () => {
    const e = thrown(() => createCpuDevice('sync' as unknown as { mode: 'sync' }));
    expect(e.code).toBe('INVALID_ARGUMENT');
    expect(e.message).toBe('createCpuDevice: options must be an object, got "sync"');
  });

  it('refuses unknown keys, wrong types and out-of-range numbers, naming the option', () => {
    const cases: [unknown, RegExp][] = [
      [{ mode: 'async' }, /option 'mode' must be one of 'sync', 'task', got "async"/],
      [
        { queue: 2 },
        /unknown option 'queue' \(known options: mode, queues, workersPerQueue, label, slabSize, ringCapacity, onUnhandledFailure\)/,
      ],
      [{ queues: '2' }, /option 'queues' must be an integer in \[1, 32\], got "2"/],
      [{ queues: 33 }, /option 'queues' must be an integer in \[1, 32\], got 33/],
      [
        { mode: 'sync', workersPerQueue: 0 },
        /option 'workersPerQueue' must be an integer in \[1, 256\], got 0/,
      ],
      [{ label: 5 }, /option 'label' must be a string, got 5/],
      [{ slabSize: 100 }, /option 'slabSize' must be an integer in \[4096, 1073741824\], got 100/],
      [{ ringCapacity: 1.5 }, /option 'ringCapacity'/],
      [[], /options must be an object, got an array of 0/],
    ];
    for (const [options, message] of cases) {
      const e = thrown(() => createCpuDevice(options as never));
      expect(e.code).toBe('INVALID_ARGUMENT');
      expect(e.message).toMatch(message);
    }
  });

  it('accepts the documented options', async () => {
    const d = createCpuDevice({
      mode: 'sync',
      queues: 1,
      workersPerQueue: 1,
      label: 'x',
      slabSize: 65536,
      ringCapacity: 65536,
    });
    expect(d.mode).toBe('sync');
    await d.destroy();
  });
});
