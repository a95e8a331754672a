import { type BindingTable, BufferUsage, slotRef } from '@keel/hal';
import { describe, expect, it } from 'vitest';
import { DeferredCommandBuffer } from '../src/index';
import { fixtureDevice } from './fixtures/fixture-device';
import { expectKeelError } from './helpers';

const device = fixtureDevice();
const otherDevice = fixtureDevice();
const P = "command buffer 'cb'";
const U = BufferUsage;
const kernel = device.executable([{ name: 'k', bindingCount: 1, constantCount: 0 }], 'm');

/**
 * Slot 3: a 4-byte fill of [0, 64), a dispatch binding from 16 to the end, a copy source [128, 192).
 * Slot 1: a 2-byte fill from 8 to the end, then a 4-byte fill from 4 to the end.
 */
function recorded(): DeferredCommandBuffer {
  const cb = new DeferredCommandBuffer(device, { label: 'cb', mode: 'reusable', bindingCapacity: 8 });
  cb.begin();
  cb.fill(slotRef(3, 0, 64), 0, 4);
  cb.dispatch(kernel, 'k', { workgroupCount: [1, 1, 1], bindings: [slotRef(3, 16)] });
  cb.copy(slotRef(3, 128, 64), { buffer: device.buffer(64) });
  cb.fill(slotRef(1, 8), 0, 2);
  cb.fill(slotRef(1, 4), 0, 4);
  cb.end();
  return cb;
}

const ALL = U.DEFAULT | U.DISPATCH_UNIFORM;

function table(
  slot3: BindingTable[number],
  slot1: BindingTable[number] = { buffer: device.buffer(64) },
): BindingTable {
  return [undefined, slot1, undefined, slot3];
}

describe('slot requirements accumulate', () => {
  it('usage OR-ed, highest end offset, alignment LCM', () => {
    expect(recorded().slotRequirements()).toEqual([
      {
        slot: 3,
        usage: U.TRANSFER_TARGET | U.TRANSFER_SOURCE,
        dispatchBinding: true,
        minByteLength: 192,
        offsetAlignment: 16,
        lengthAlignment: 1,
      },
      {
        slot: 1,
        usage: U.TRANSFER_TARGET,
        dispatchBinding: false,
        minByteLength: 8,
        offsetAlignment: 4,
        lengthAlignment: 4,
      },
    ]);
  });

  it('LCM of unusual alignments', () => {
    const odd = fixtureDevice({ minStorageBufferOffsetAlignment: 12 });
    const exe = odd.executable([{ name: 'k', bindingCount: 1, constantCount: 0 }]);
    const cb = new DeferredCommandBuffer(odd, { bindingCapacity: 1 });
    cb.begin();
    cb.dispatch(exe, 0, { workgroupCount: [1, 1, 1], bindings: [slotRef(0, 24, 8)] });
    cb.fill(slotRef(0, 0, 8), 0, 4);
    cb.fill(slotRef(0, 0, 8), 0, 2);
    cb.end();
    expect(cb.slotRequirements()[0]?.offsetAlignment).toBe(12);
    expect(cb.slotRequirements()[0]?.minByteLength).toBe(32);
  });

  it('indirect parameters need 12 bytes from their offset', () => {
    const cb = new DeferredCommandBuffer(device, { bindingCapacity: 1 });
    cb.begin();
    cb.dispatch(kernel, 'k', { indirect: slotRef(0, 20), bindings: [{ buffer: device.buffer(16) }] });
    cb.end();
    expect(cb.slotRequirements()).toEqual([
      {
        slot: 0,
        usage: U.DISPATCH_INDIRECT_PARAMETERS,
        dispatchBinding: false,
        minByteLength: 32,
        offsetAlignment: 4,
        lengthAlignment: 1,
      },
    ]);
  });
});

describe('validateSubmission', () => {
  it('accepts a table that meets every requirement', () => {
    const cb = recorded();
    cb.validateSubmission(table({ buffer: device.buffer(192, ALL) }));
    cb.validateSubmission(table({ buffer: device.buffer(512, ALL), offset: 256, length: 192 }));
    cb.validateSubmission([...table({ buffer: device.buffer(192, ALL) }), { buffer: otherDevice.buffer(1) }]); // extra entries are not looked at
  });

  it('table present and long enough (INVALID_ARGUMENT)', () => {
    const cb = recorded();
    expectKeelError(
      () => cb.validateSubmission(),
      'INVALID_ARGUMENT',
      `${P}: recorded commands use binding slots (up to slot 3) but no binding table was given`,
    );
    expectKeelError(
      () => cb.validateSubmission([undefined, { buffer: device.buffer(64) }]),
      'INVALID_ARGUMENT',
      `${P}: binding table has 2 entries but recorded commands use slot 3`,
    );
    expectKeelError(
      () => cb.validateSubmission([undefined, undefined, undefined, { buffer: device.buffer(192, ALL) }]),
      'INVALID_ARGUMENT',
      `${P}: binding slot 1: no binding, but recorded commands use the slot`,
    );
  });

  it('buffer of this device, live', () => {
    const cb = recorded();
    expectKeelError(
      () => cb.validateSubmission(table({ buffer: otherDevice.buffer(192, ALL, 'x') })),
      'INVALID_ARGUMENT',
      `${P}: binding slot 3: buffer 'x' (192 bytes) belongs to another device`,
    );
    const dead = device.buffer(192, ALL, 'x');
    dead.destroy();
    expectKeelError(
      () => cb.validateSubmission(table({ buffer: dead })),
      'FAILED_PRECONDITION',
      `${P}: binding slot 3: buffer 'x' (192 bytes) was destroyed and cannot be used`,
    );
    const released = device.buffer(192, ALL, 'x');
    released.state = 'deallocated';
    expectKeelError(
      () => cb.validateSubmission(table({ buffer: released })),
      'FAILED_PRECONDITION',
      `${P}: binding slot 3: buffer 'x' (192 bytes) was released by queueDealloca and cannot be used`,
    );
  });

  it('usage the slot accumulated', () => {
    const cb = recorded();
    expectKeelError(
      () => cb.validateSubmission(table({ buffer: device.buffer(192, U.TRANSFER | U.MAPPING, 'x') })),
      'INVALID_ARGUMENT',
      `${P}: binding slot 3: buffer 'x' (192 bytes) lacks TRANSFER_SOURCE|TRANSFER_TARGET and DISPATCH_STORAGE or DISPATCH_UNIFORM usage that recorded commands need (has TRANSFER_SOURCE|TRANSFER_TARGET|MAPPING)`,
    );
    expectKeelError(
      () =>
        cb.validateSubmission(
          table({ buffer: device.buffer(192, U.TRANSFER_TARGET | U.DISPATCH_STORAGE, 'x') }),
        ),
      'INVALID_ARGUMENT',
      `${P}: binding slot 3: buffer 'x' (192 bytes) lacks TRANSFER_SOURCE|TRANSFER_TARGET and DISPATCH_STORAGE or DISPATCH_UNIFORM usage that recorded commands need (has TRANSFER_TARGET|DISPATCH_STORAGE)`,
    );
    cb.validateSubmission(table({ buffer: device.buffer(192, U.TRANSFER | U.DISPATCH_UNIFORM) }));
  });

  it('range: the binding holds the highest end offset (OUT_OF_RANGE)', () => {
    const cb = recorded();
    expectKeelError(
      () => cb.validateSubmission(table({ buffer: device.buffer(64, ALL, 'x') })),
      'OUT_OF_RANGE',
      `${P}: binding slot 3: buffer 'x' (64 bytes) is smaller than the 192 bytes recorded commands use`,
    );
    expectKeelError(
      () => cb.validateSubmission(table({ buffer: device.buffer(512, ALL, 'x'), offset: 64, length: 176 })),
      'OUT_OF_RANGE',
      `${P}: binding slot 3: binding range [64, 240) of buffer 'x' (512 bytes) is 176 bytes, smaller than the 192 bytes recorded commands use`,
    );
    expectKeelError(
      () => cb.validateSubmission(table({ buffer: device.buffer(256, ALL, 'x'), offset: 128 })),
      'OUT_OF_RANGE',
      `${P}: binding slot 3: binding range [128, 256) of buffer 'x' (256 bytes) is 128 bytes, smaller than the 192 bytes recorded commands use`,
    );
    expectKeelError(
      () => cb.validateSubmission(table({ buffer: device.buffer(256, ALL, 'x'), offset: 64, length: 256 })),
      'OUT_OF_RANGE',
      `${P}: binding slot 3: binding range [64, 320) leaves buffer 'x' (256 bytes)`,
    );
    expectKeelError(
      () => cb.validateSubmission(table({ buffer: device.buffer(256, ALL, 'x'), offset: 512 })),
      'OUT_OF_RANGE',
      `${P}: binding slot 3: binding offset 512 is past the end of buffer 'x' (256 bytes)`,
    );
    expectKeelError(
      () => cb.validateSubmission(table({ buffer: device.buffer(256, ALL, 'x'), offset: -16 })),
      'INVALID_ARGUMENT',
      `${P}: binding slot 3: binding offset must be a non-negative integer, got -16`,
    );
    expectKeelError(
      () => cb.validateSubmission(table({ buffer: device.buffer(256, ALL, 'x'), length: 200.5 })),
      'INVALID_ARGUMENT',
      `${P}: binding slot 3: binding length must be a non-negative integer, got 200.5`,
    );
  });

  it('alignment: binding offset meets the LCM; fills to the end need a length multiple', () => {
    const cb = recorded();
    expectKeelError(
      () => cb.validateSubmission(table({ buffer: device.buffer(512, ALL, 'x'), offset: 8 })),
      'INVALID_ARGUMENT',
      `${P}: binding slot 3: binding offset 8 is not a multiple of 16, the alignment recorded commands need`,
    );
    expectKeelError(
      () =>
        cb.validateSubmission(
          table({ buffer: device.buffer(192, ALL) }, { buffer: device.buffer(64), length: 62 }),
        ),
      'INVALID_ARGUMENT',
      `${P}: binding slot 1: binding range of 62 bytes is not a multiple of 4, which fills to the end of the slot need`,
    );
    expectKeelError(
      () =>
        cb.validateSubmission(
          table({ buffer: device.buffer(192, ALL) }, { buffer: device.buffer(64), offset: 2 }),
        ),
      'INVALID_ARGUMENT',
      `${P}: binding slot 1: binding offset 2 is not a multiple of 4, the alignment recorded commands need`,
    );
  });

  it('directly referenced buffers must still be live', () => {
    const direct = device.buffer(64, U.DEFAULT, 'd');
    const cb = new DeferredCommandBuffer(device, { label: 'cb', mode: 'reusable' });
    cb.begin();
    cb.fill({ buffer: direct }, 0, 4);
    cb.end();
    cb.validateSubmission();
    direct.destroy();
    expectKeelError(
      () => cb.validateSubmission(),
      'FAILED_PRECONDITION',
      `${P}: buffer 'd' (64 bytes), referenced directly by recorded commands, was destroyed`,
    );
  });

  it('without slots needs no table', () => {
    const cb = new DeferredCommandBuffer(device, { bindingCapacity: 4 });
    cb.begin();
    cb.fill({ buffer: device.buffer(16) }, 0, 4);
    cb.end();
    cb.validateSubmission();
    cb.validateSubmission([]);
  });

  it('costs O(slots used): reads each used table entry once, whatever the command count', () => {
    const cb = new DeferredCommandBuffer(device, { mode: 'reusable', bindingCapacity: 8 });
    const exe = device.executable([{ name: 'k', bindingCount: 4, constantCount: 0 }]);
    cb.begin();
    for (let i = 0; i < 5000; i++) {
      cb.dispatch(exe, 'k', {
        workgroupCount: [1, 1, 1],
        bindings: [
          slotRef(i % 8),
          slotRef((i + 1) % 8),
          slotRef((i + 2) % 8),
          slotRef((i + 3) % 8, 16 * (i % 4)),
        ],
      });
    }
    cb.end();
    const entries = Array.from({ length: 8 }, () => ({ buffer: device.buffer(256) }));
    let reads = 0;
    const counted = new Proxy(entries, {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
        return Reflect.get(target, key, receiver);
      },
    });
    cb.validateSubmission(counted);
    expect(reads).toBe(8);
    expect(cb.slotRequirements().map((r) => r.slot)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('a high slot costs what the slots used cost, not memory or time in the slot number', () => {
    // The highest slot a capacity of 2^31 - 1 allows, 2^30 and a low one: the requirements must not
    // keep a slot-indexed array (one of 2^31 int32 is 8 GiB).
    const top = 2 ** 31 - 2;
    const before = process.memoryUsage().arrayBuffers;
    const started = performance.now();
    const cb = new DeferredCommandBuffer(device, { mode: 'reusable', bindingCapacity: 2 ** 31 - 1 });
    cb.begin();
    cb.fill(slotRef(top, 0, 16), 0, 4);
    cb.fill(slotRef(2 ** 30, 4, 8), 0, 4);
    cb.fill(slotRef(2, 0, 4), 0, 4);
    cb.copy(slotRef(2 ** 30, 16, 16), slotRef(top, 32, 16));
    cb.end();
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(1 << 20);
    expect(cb.slotRequirements().map((r) => [r.slot, r.minByteLength])).toEqual([
      [top, 48],
      [2 ** 30, 32],
      [2, 4],
    ]);
    const table: BindingTable[number][] = [];
    table[2] = { buffer: device.buffer(64) };
    table[2 ** 30] = { buffer: device.buffer(64) };
    table[top] = { buffer: device.buffer(64) };
    cb.validateSubmission(table);
    table[2 ** 30] = undefined;
    expectKeelError(
      () => cb.validateSubmission(table),
      'INVALID_ARGUMENT',
      `command buffer: binding slot ${2 ** 30}: no binding, but recorded commands use the slot`,
    );
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
