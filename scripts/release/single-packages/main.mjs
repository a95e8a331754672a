// A consumer that installed only @keel/fence and @keel/command-buffer from their tarballs.
import { createCommandBuffer, RecordingSink } from '@keel/command-buffer';
import { Fence, KeelError, TimelineSemaphore } from '@keel/fence';

const semaphore = new TimelineSemaphore(0);
const done = Fence.of({ semaphore, value: 2 }).wait({ timeoutMs: 1000 });
semaphore.signal(1);
semaphore.signal(2);
await done;

try {
  semaphore.signal(2);
  throw new Error('a non-increasing signal was accepted');
} catch (error) {
  if (!KeelError.is(error, 'INVALID_ARGUMENT')) throw error;
}

// Command buffers only need a device's info and buffers to record and replay.
const device = {
  info: {
    backend: 'consumer',
    name: 'stand-in',
    queueCount: 1,
    limits: {
      maxBufferSize: 1 << 20,
      maxWorkgroupCount: [65535, 65535, 65535],
      maxBindings: 8,
      maxConstants: 16,
      minStorageBufferOffsetAlignment: 16,
      maxUpdateSize: 65536,
    },
    features: [],
  },
};
const buffer = {
  device,
  byteLength: 64,
  usage: 0b111,
  memoryType: 1,
  placement: { affinity: 0xffffffff, queueAllocated: false },
  state: 'live',
};
const cb = createCommandBuffer(device, { mode: 'reusable', bindingCapacity: 1 });
cb.begin();
cb.fill({ slot: 0, offset: 0, length: 16 }, 0x7f, 1);
cb.end();
const sink = new RecordingSink();
cb.validateSubmission([{ buffer, offset: 16 }]);
cb.replay(sink, [{ buffer, offset: 16 }]);
console.log(
  `fence ok (payload ${semaphore.value}); replayed ${sink.commands.length} command(s) at offset ${sink.commands[0].offset}`,
);
