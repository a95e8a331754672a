/**
 * command-buffer: the cost split of seed 000. Records a reusable 1000-dispatch command buffer whose
 * bindings are all binding-table slots (8 slots, 4 bindings and 2 constants per dispatch), validates a
 * fresh 8-slot binding table for it, and replays it into a no-op sink. Record, validate and replay are
 * sampled interleaved in one run; every figure is a median.
 *
 * Metrics: record_us_per_dispatch (create + begin + 1000 dispatches + end, / 1000; target ≤ 1),
 * submit_validate_us (one validateSubmission of a table not seen before), replay_us_per_dispatch,
 * record_vs_validate_ratio (recording the 1000 dispatches / one submission validation; target ≥ 100).
 *
 * The dispatch configs (ref objects, constants arrays) are built once before timing, as a caller that
 * memoizes its recording would; recording time is the command buffer's own cost.
 */
import { createCommandBuffer, NoopSink } from '@keel/command-buffer';
import {
  type BindingTable,
  type Buffer,
  BufferUsage,
  type CommandBuffer,
  createExecutableExports,
  type Device,
  type DispatchConfig,
  type Executable,
  lookupExport,
  MemoryType,
  QueueAffinity,
  slotRef,
} from '@keel/hal';
import { median, metric, type Suite } from '../harness.ts';

const DISPATCHES = 1000;
const SLOTS = 8;
const VALIDATIONS_PER_SAMPLE = 2000;
const SAMPLES = 41;
const WARMUP = 8;

/**
 * A stand-in device with only what command buffers read (info: queue count and limits; buffers and
 * executables naming it). It runs nothing: no device package exists yet, and the suite measures the
 * command buffer alone.
 */
function benchDevice(): { device: Device; buffer(byteLength: number): Buffer; executable: Executable } {
  const device = {
    info: {
      backend: 'bench',
      name: 'command-buffer bench stand-in',
      queueCount: 1,
      limits: {
        maxBufferSize: 1 << 30,
        maxWorkgroupCount: [65535, 65535, 65535] as const,
        maxBindings: 16,
        maxConstants: 64,
        minStorageBufferOffsetAlignment: 256,
        maxUpdateSize: 65536,
      },
      features: [],
    },
  } as unknown as Device;
  const exports = createExecutableExports(
    [{ name: 'kernel', bindingCount: 4, constantCount: 2, workgroupSize: [64, 1, 1] }],
    "'bench'",
  );
  const executable: Executable = {
    device,
    label: 'bench',
    exports,
    lookupExport: (entry) => lookupExport(exports, entry, "'bench'"),
  };
  const buffer = (byteLength: number): Buffer => ({
    device,
    byteLength,
    usage: BufferUsage.DEFAULT,
    memoryType: MemoryType.DEVICE_LOCAL,
    placement: { affinity: QueueAffinity.ANY, queueAllocated: false },
    state: 'live',
    label: undefined,
    destroy() {},
  });
  return { device, buffer, executable };
}

export const commandBufferSuite: Suite = {
  name: 'command-buffer',
  description: 'record 1000 slot-bound dispatches vs validate a binding table vs replay (no-op sink)',
  async run({ log }) {
    const { device, buffer, executable } = benchDevice();
    const configs: DispatchConfig[] = [];
    for (let i = 0; i < DISPATCHES; i++) {
      configs.push({
        workgroupCount: [1 + (i % 7), 1, 1],
        constants: [i, i * 3],
        bindings: [
          slotRef(i % SLOTS),
          slotRef((i + 1) % SLOTS),
          slotRef((i + 2) % SLOTS, 256),
          slotRef((i + 3) % SLOTS),
        ],
      });
    }
    const record = (): CommandBuffer => {
      const cb = createCommandBuffer(device, { mode: 'reusable', bindingCapacity: SLOTS, label: 'bench' });
      cb.begin();
      for (let i = 0; i < DISPATCHES; i++) cb.dispatch(executable, 0, configs[i]!);
      cb.end();
      return cb;
    };
    // Fresh tables: new buffers and entries the command buffer has never seen; cycled during timing.
    const tables: BindingTable[] = [];
    for (let t = 0; t < 64; t++) {
      tables.push(Array.from({ length: SLOTS }, () => ({ buffer: buffer(4096), offset: 512 * (t % 4) })));
    }
    const sink = new NoopSink();
    const cb = record();
    for (const table of tables) cb.validateSubmission(table); // the tables are valid
    let sinkChecks = 0;

    const recordMs: number[] = [];
    const validateMs: number[] = [];
    const replayMs: number[] = [];
    let t = 0;
    for (let s = 0; s < WARMUP + SAMPLES; s++) {
      let start = performance.now();
      const recorded = record();
      const r = performance.now() - start;
      sinkChecks += recorded.commandCount;

      start = performance.now();
      for (let i = 0; i < VALIDATIONS_PER_SAMPLE; i++) {
        cb.validateSubmission(tables[t]!);
        t = (t + 1) & 63;
      }
      const v = (performance.now() - start) / VALIDATIONS_PER_SAMPLE;

      start = performance.now();
      cb.replay(sink, tables[t]!);
      const p = performance.now() - start;

      if (s >= WARMUP) {
        recordMs.push(r);
        validateMs.push(v);
        replayMs.push(p);
      }
    }
    if (sinkChecks !== (WARMUP + SAMPLES) * DISPATCHES)
      throw new Error('bench: recorded command count is wrong');

    const recordMedian = median(recordMs);
    const validateMedian = median(validateMs);
    const replayMedian = median(replayMs);
    log(
      `record ${(recordMedian * 1000).toFixed(1)} µs / ${DISPATCHES} dispatches, validate ${(validateMedian * 1000).toFixed(3)} µs, replay ${(replayMedian * 1000).toFixed(1)} µs`,
    );
    return {
      record_us_per_dispatch: metric((recordMedian * 1000) / DISPATCHES, 'us'),
      submit_validate_us: metric(validateMedian * 1000, 'us'),
      replay_us_per_dispatch: metric((replayMedian * 1000) / DISPATCHES, 'us'),
      record_vs_validate_ratio: metric(recordMedian / validateMedian, 'x'),
    };
  },
};
