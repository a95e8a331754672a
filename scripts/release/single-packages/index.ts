// Type-checks against the installed declarations with Node16 resolution (exports maps and types).
import { createCommandBuffer, RecordingSink } from '@keel/command-buffer';
import { Fence, KeelError, type Semaphore, TimelineSemaphore, waitAll } from '@keel/fence';

const s: Semaphore = new TimelineSemaphore(0);
const f: Fence = Fence.join(Fence.of({ semaphore: s, value: 1 }), Fence.empty);
const all: Promise<void> = waitAll([f], { timeoutMs: 10 });
const e: KeelError = new KeelError('INTERNAL', 'x');
const sink: RecordingSink = new RecordingSink();
const make: typeof createCommandBuffer = createCommandBuffer;

export type CommandBuffer = ReturnType<typeof createCommandBuffer>;
export { all, e, make, sink };
