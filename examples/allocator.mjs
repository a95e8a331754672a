// The queue-ordered allocator on its own (what a device uses to implement queueAlloca/queueDealloca):
// a whole step is issued before anything runs, and the second allocation reuses the first one's block
// because its wait fence already orders it after the release (same-queue reuse, no waiting).
import { ArrayBufferSlabProvider, QueueAllocator, TlsfPool } from '@keel/allocator';
import { Fence, TimelineSemaphore } from '@keel/fence';

// A TLSF pool over resizable ArrayBuffers (slabs grow in place), 256 MiB at most.
const pool = new TlsfPool(new ArrayBufferSlabProvider({ maxByteLength: 1 << 30 }), {
  budget: 256 * 1024 * 1024,
});
const allocator = new QueueAllocator(pool);

const queue = new TimelineSemaphore(0); // the timeline of one device queue
const at = (value) => Fence.of({ semaphore: queue, value });

// Issue a whole step before anything runs: alloca → kernel → dealloca → alloca.
const a = allocator.alloca(1, at(0), at(1), 1 << 20); // usable once queue@0, signals queue@1
const block = a.block; // { slab: { id, byteLength, memory: ArrayBuffer }, offset, byteLength }
// ... a kernel waits queue@1, uses the block, signals queue@2 ...
allocator.dealloca(1, at(2), at(3), a); // death frontier: queue@2
const b = allocator.alloca(1, at(3), at(4), 1 << 20); // wait queue@3 dominates queue@2:
if (b.source !== 'dominated') throw new Error(`expected 'dominated' reuse, got ${b.source}`);
if (b.block.slab !== block.slab || b.block.offset !== block.offset)
  throw new Error('expected the same block');

queue.signal(2); // the "kernel" is done
await at(4).wait({ timeoutMs: 1000 }); // the dealloca and the second alloca ran in order
const { reuseDominated, growths, peakLiveBytes } = allocator.stats;
if (reuseDominated !== 1 || growths !== 1 || peakLiveBytes !== 1 << 20) {
  throw new Error(`unexpected stats ${JSON.stringify({ reuseDominated, growths, peakLiveBytes })}`);
}
console.log(`1 growth, ${reuseDominated} dominated reuse, peak live ${peakLiveBytes} B, state ${b.state}`);
allocator.destroy();
