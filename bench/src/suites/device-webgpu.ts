/**
 * device-webgpu: Keel's WebGPU device against the raw floor, on one adapter in one run (Dawn in Node:
 * lavapipe on a CPU-only machine, the NVIDIA driver on the GPU machine; `machine.adapter` names it).
 *
 * - replay vs floor: a reusable command buffer of 1 000 dispatches (a 2-binding kernel with 3 constants,
 *   ping-ponging between two buffers of 256 floats, every binding a binding-table slot) is submitted
 *   with a fresh binding table array per submission (cycling over two buffer pairs, as a training loop
 *   alternates batches), against the same 1 000 dispatches encoded straight on the GPUDevice with
 *   pre-built bind groups (the same pipeline, group 0 per dispatch, group 1 set once, as Keel's replay
 *   does for equal constants). Timed: host time from the call to `submit` returning (encode + submit;
 *   Keel's side calls `flush`, which submits the turn's batch at once).
 *   GPU completion (and an empty submission, so the implementation retires the previous command
 *   buffer) is awaited after each sample, outside the timed region, for both variants alike, so each
 *   sample starts on an idle queue and pays for no other sample's cleanup. Metrics: replay_us_per_dispatch, floor_us_per_dispatch,
 *   replay_vs_floor_ratio (target ≤ 1.2).
 * - one-shot vs reusable: re-recording a one-shot command buffer of the same 1 000 dispatches (direct
 *   refs) and submitting it, vs submitting the reusable one (host time, as above). Metric
 *   oneshot_vs_reusable_ratio (and both per-dispatch figures).
 * - alloca vs createBuffer: a queueAlloca + queueDealloca pair of 64 KiB on one queue (fences built
 *   before timing) vs createBuffer + destroy of a 64 KiB buffer. Metrics alloca_us, createbuffer_us
 *   (per pair), alloca_vs_createbuffer_ratio.
 *
 * Variants are interleaved (A, B, A, B, ...) and every figure is a median of samples.
 */

import { createWebGpuDevice, type WebGpuDevice, WebGpuExecutable } from '@keel/device-webgpu';
import { Fence, TimelineSemaphore } from '@keel/fence';
import {
  type BindingTable,
  type Buffer,
  BufferUsage,
  type CommandBuffer,
  type Executable,
  QueueAffinity,
  slotRef,
} from '@keel/hal';
import { type Metrics, median, metric, type Suite, type SuiteContext } from '../harness.ts';

const DISPATCHES = 1000;
const ELEMENTS = 256;
const SAMPLES = 61;
const WARMUP = 8;
const ALLOC_BYTES = 64 * 1024;
const ALLOCS_PER_SAMPLE = 200;
const Q0 = QueueAffinity.of(0);

const KERNEL = /* wgsl */ `
struct C { scale: f32, offset: f32, n: u32 }
@group(0) @binding(0) var<storage, read_write> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(1) @binding(0) var<uniform> c: C;
@compute @workgroup_size(64)
fn axpb(@builtin(global_invocation_id) g: vec3<u32>) {
  if (g.x < c.n) { dst[g.x] = src[g.x] * c.scale + c.offset; }
}
`;

function f32Bits(value: number): number {
  return new Uint32Array(new Float32Array([value]).buffer)[0] as number;
}

const CONSTANTS = [f32Bits(0.5), f32Bits(1), ELEMENTS];
const GROUPS: [number, number, number] = [Math.ceil(ELEMENTS / 64), 1, 1];

/** A semaphore whose `next()` is the fence of its next value. */
class Chain {
  readonly semaphore = new TimelineSemaphore();
  value = 0;
  next(): Fence {
    this.value++;
    return Fence.of({ semaphore: this.semaphore, value: this.value });
  }
  now(): Fence {
    return Fence.of({ semaphore: this.semaphore, value: this.value });
  }
}

function record(
  device: WebGpuDevice,
  executable: Executable,
  mode: 'one-shot' | 'reusable',
  buffers?: readonly Buffer[],
) {
  const cb = device.createCommandBuffer({ mode, bindingCapacity: 2 });
  cb.begin();
  const ab =
    buffers === undefined
      ? [slotRef(0), slotRef(1)]
      : [{ buffer: buffers[0] as Buffer }, { buffer: buffers[1] as Buffer }];
  const ba = [ab[1] as (typeof ab)[number], ab[0] as (typeof ab)[number]];
  for (let i = 0; i < DISPATCHES; i++) {
    cb.dispatch(executable, 0, {
      workgroupCount: GROUPS,
      constants: CONSTANTS,
      bindings: i % 2 === 0 ? ab : ba,
    });
  }
  cb.end();
  return cb;
}

/** The floor: the same dispatches encoded on the GPUDevice with pre-built bind groups. */
function floorEncoder(
  device: WebGpuDevice,
  executable: WebGpuExecutable,
  pairs: readonly (readonly Buffer[])[],
) {
  const gpu = device.gpuDevice;
  const compiled = executable.compiled[0];
  if (compiled === undefined) throw new Error('no export');
  const pipeline = compiled.pipeline;
  const memoryOf = (b: Buffer) => (b as unknown as { memory: { buffer: GPUBuffer } }).memory.buffer;
  const groups = pairs.map((pair) => {
    const [x, y] = pair.map(memoryOf) as [GPUBuffer, GPUBuffer];
    const layout = pipeline.getBindGroupLayout(0);
    return [
      gpu.createBindGroup({
        layout,
        entries: [
          { binding: 0, resource: { buffer: x } },
          { binding: 1, resource: { buffer: y } },
        ],
      }),
      gpu.createBindGroup({
        layout,
        entries: [
          { binding: 0, resource: { buffer: y } },
          { binding: 1, resource: { buffer: x } },
        ],
      }),
    ] as const;
  });
  const uniforms = gpu.createBuffer({ size: 256, usage: 0x40 | 0x08 /* UNIFORM | COPY_DST */ });
  gpu.queue.writeBuffer(uniforms, 0, new Uint32Array(CONSTANTS));
  const constants = gpu.createBindGroup({
    layout: pipeline.getBindGroupLayout(1),
    entries: [{ binding: 0, resource: { buffer: uniforms, offset: 0, size: 256 } }],
  });
  const offsets = new Uint32Array([0]);
  let k = 0;
  return () => {
    const [ab, ba] = groups[k++ % groups.length] as readonly [GPUBindGroup, GPUBindGroup];
    const encoder = gpu.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(1, constants, offsets, 0, 1);
    for (let i = 0; i < DISPATCHES; i++) {
      pass.setBindGroup(0, i % 2 === 0 ? ab : ba);
      pass.dispatchWorkgroups(GROUPS[0], GROUPS[1], GROUPS[2]);
    }
    pass.end();
    gpu.queue.submit([encoder.finish()]);
  };
}

/** Median host milliseconds of each variant; `settle` (untimed) runs after every sample. */
async function hostTimes<K extends string>(
  variants: Record<K, () => void>,
  settle: () => Promise<void>,
  samples = SAMPLES,
): Promise<Record<K, number>> {
  const keys = Object.keys(variants) as K[];
  const times = new Map<K, number[]>(keys.map((k) => [k, []]));
  for (let s = 0; s < WARMUP + samples; s++) {
    for (const key of keys) {
      const run = variants[key];
      const start = performance.now();
      run();
      const elapsed = performance.now() - start;
      await settle();
      if (s >= WARMUP) times.get(key)?.push(elapsed);
    }
  }
  const result = {} as Record<K, number>;
  for (const key of keys) result[key] = median(times.get(key) ?? []);
  return result;
}

async function measure(ctx: SuiteContext): Promise<Metrics> {
  const device = await createWebGpuDevice({ label: 'bench' });
  ctx.machine.adapter = device.info.name;
  ctx.log(`adapter: ${device.info.name}`);
  try {
    const executable = await device.createExecutable({
      format: 'wgsl',
      code: KERNEL,
      label: 'axpb',
      exports: [{ name: 'axpb', bindingCount: 2, constantCount: 3, workgroupSize: [64, 1, 1] }],
    });
    if (!(executable instanceof WebGpuExecutable)) throw new Error('not a WebGPU executable');
    const make = () => device.createBuffer({ byteLength: ELEMENTS * 4, usage: BufferUsage.DEFAULT });
    const pairs = [
      [make(), make()],
      [make(), make()],
    ] as const;
    const reusable = record(device, executable, 'reusable');
    const chain = new Chain();
    let pending: Fence = Fence.empty;
    let k = 0;
    const replay = (): void => {
      const pair = pairs[k++ % pairs.length] as readonly Buffer[];
      // A fresh table array per submission, over buffers seen before.
      const table: BindingTable = [{ buffer: pair[0] as Buffer }, { buffer: pair[1] as Buffer }];
      pending = chain.next();
      device.queueExecute(Q0, Fence.empty, pending, [reusable], [table]);
      // The device submits a turn's operations as one batch at the end of the turn: flush submits it
      // here, inside the timed region, as the floor's submit is.
      device.flush(Q0);
    };
    const floor = floorEncoder(device, executable, pairs);
    // Untimed between samples: the work completes, then an empty submission lets the implementation
    // retire the previous command buffer, so no sample pays for the one before it.
    const settle = async (): Promise<void> => {
      await pending.wait({ timeoutMs: 60_000 });
      const queue = device.gpuDevice.queue;
      await queue.onSubmittedWorkDone();
      queue.submit([]);
      await queue.onSubmittedWorkDone();
    };

    ctx.log('replay vs floor (1 000 dispatches, host encode + submit)');
    const rf = await hostTimes({ replay, floor }, settle);
    const replayUs = (rf.replay * 1000) / DISPATCHES;
    const floorUs = (rf.floor * 1000) / DISPATCHES;

    ctx.log('one-shot (re-record every submission) vs reusable');
    const direct = pairs[0] as readonly Buffer[];
    const oneShot = (): void => {
      const cb: CommandBuffer = record(device, executable, 'one-shot', direct);
      pending = chain.next();
      device.queueExecute(Q0, Fence.empty, pending, [cb]);
      device.flush(Q0);
    };
    const orr = await hostTimes({ oneShot, reusable: replay }, settle, 15);
    const oneShotUs = (orr.oneShot * 1000) / DISPATCHES;
    const reusableUs = (orr.reusable * 1000) / DISPATCHES;

    ctx.log(`alloca + dealloca vs createBuffer + destroy (${ALLOC_BYTES} bytes)`);
    const allocChain = new Chain();
    const params = { usage: BufferUsage.DEFAULT };
    const fences: Fence[] = [];
    const refill = (): void => {
      fences.length = 0;
      const base = allocChain.value;
      for (let i = 1; i <= 2 * ALLOCS_PER_SAMPLE; i++) {
        fences.push(Fence.of({ semaphore: allocChain.semaphore, value: base + i }));
      }
      allocChain.value = base + 2 * ALLOCS_PER_SAMPLE;
    };
    refill();
    let consumed = false;
    const alloca = (): void => {
      consumed = true;
      let wait = Fence.empty;
      for (let i = 0; i < ALLOCS_PER_SAMPLE; i++) {
        const allocated = fences[2 * i] as Fence;
        const released = fences[2 * i + 1] as Fence;
        const b = device.queueAlloca(Q0, wait, allocated, params, ALLOC_BYTES);
        device.queueDealloca(Q0, allocated, released, b);
        wait = released;
      }
    };
    const createBuffer = (): void => {
      for (let i = 0; i < ALLOCS_PER_SAMPLE; i++) {
        device.createBuffer({ byteLength: ALLOC_BYTES, usage: BufferUsage.DEFAULT }).destroy();
      }
    };
    const ab = await hostTimes(
      { alloca, createBuffer },
      async () => {
        if (consumed) {
          await allocChain.now().wait({ timeoutMs: 60_000 });
          refill();
          consumed = false;
        }
        await device.gpuDevice.queue.onSubmittedWorkDone();
      },
      SAMPLES,
    );
    const allocaUs = (ab.alloca * 1000) / ALLOCS_PER_SAMPLE;
    const createUs = (ab.createBuffer * 1000) / ALLOCS_PER_SAMPLE;
    const stats = device.stats;
    ctx.log(
      `submissions ${stats.submissions}, bind groups made ${stats.bindGroups.misses}, cache hits ${stats.bindGroups.hits}, deferred ${stats.deferred}`,
    );

    return {
      replay_us_per_dispatch: metric(replayUs, 'us'),
      floor_us_per_dispatch: metric(floorUs, 'us'),
      replay_vs_floor_ratio: metric(replayUs / floorUs, 'x'),
      oneshot_us_per_dispatch: metric(oneShotUs, 'us'),
      reusable_us_per_dispatch: metric(reusableUs, 'us'),
      oneshot_vs_reusable_ratio: metric(oneShotUs / reusableUs, 'x'),
      alloca_us: metric(allocaUs, 'us'),
      createbuffer_us: metric(createUs, 'us'),
      alloca_vs_createbuffer_ratio: metric(allocaUs / createUs, 'x'),
    };
  } finally {
    await device.destroy();
  }
}

export const deviceWebGpuSuite: Suite = {
  name: 'device-webgpu',
  description: 'WebGPU replay vs raw-encoding floor, one-shot vs reusable, alloca vs createBuffer',
  run: measure,
};
