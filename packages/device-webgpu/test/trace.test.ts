/**
 * WebGPU traces (the shared contract is the conformance suite's `trace.*` cases): with
 * `timestamp-query` (Dawn on lavapipe has it; the device requests it) every dispatch is timed by GPU
 * timestamps in its own pass and the results stay right; with `gpuTimestamps: false` dispatches are
 * host estimates, marked as such; a device without the feature falls back the same way; operations
 * that device loss fails are in the trace with their error.
 */

import { chromeTraceProblems, traceEventsOf } from '@keel/cts';
import { Fence, TimelineSemaphore } from '@keel/fence';
import { BufferUsage, type Executable, QueueAffinity, type TraceOptions } from '@keel/hal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebGpuDevice, type WebGpuDevice } from '../src/index';
import { dawnFlags } from '../src/platform/dawn';
import { wgslKernel } from './cts-kernels';
import { probeWebGpu } from './webgpu-probe';

const probe = await probeWebGpu();
const Q0 = QueueAffinity.of(0);
const N = 1024;

describe.skipIf(!probe.available)('webgpu traces', () => {
  let device: WebGpuDevice;
  let exe: Executable;
  const gpuErrors: string[] = [];

  beforeAll(async () => {
    device = await createWebGpuDevice({ onUncapturedError: (e) => gpuErrors.push(e.message) });
    exe = await device.createExecutable(
      wgslKernel('negateDouble', [
        { name: 'negate', bindingCount: 2, constantCount: 1, workgroupSize: [64, 1, 1] },
        { name: 'double', bindingCount: 2, constantCount: 1, workgroupSize: [64, 1, 1] },
      ]),
    );
  });

  afterAll(async () => {
    await device?.destroy();
    expect(gpuErrors).toEqual([]);
  });

  /** Traces `steps` executes of negate → double → negate and returns the trace and the output. */
  async function traced(options: TraceOptions, steps: number) {
    const a = device.createBuffer({ byteLength: N * 4, usage: BufferUsage.DEFAULT });
    const b = device.createBuffer({ byteLength: N * 4, usage: BufferUsage.DEFAULT });
    const s = new TimelineSemaphore();
    let v = 0;
    device.queueWrite(
      Q0,
      Fence.empty,
      Fence.of({ semaphore: s, value: ++v }),
      Int32Array.from({ length: N }, (_, i) => i),
      { buffer: a },
    );
    const cb = device.createCommandBuffer({ mode: 'reusable' });
    cb.begin();
    cb.dispatch(exe, 'negate', { workload: [N], constants: [N], bindings: [{ buffer: a }, { buffer: b }] });
    cb.barrier();
    cb.dispatch(exe, 'double', { workload: [N], constants: [N], bindings: [{ buffer: b }, { buffer: a }] });
    cb.barrier();
    cb.dispatch(exe, 'negate', { workload: [N], constants: [N], bindings: [{ buffer: a }, { buffer: b }] });
    cb.end();
    const trace = device.startTrace(options);
    for (let i = 0; i < steps; i++) {
      device.queueExecute(
        Q0,
        Fence.of({ semaphore: s, value: v }),
        Fence.of({ semaphore: s, value: v + 1 }),
        [cb],
      );
      v++;
    }
    const out = new Int32Array(N);
    device.queueRead(
      Q0,
      Fence.of({ semaphore: s, value: v }),
      Fence.of({ semaphore: s, value: v + 1 }),
      { buffer: b },
      out,
    );
    await s.wait(v + 1, { timeoutMs: 10_000 });
    trace.stop();
    const json = JSON.parse(JSON.stringify(await trace.toChromeTrace())) as unknown;
    a.destroy();
    b.destroy();
    return { trace, json, out };
  }

  it('times every dispatch with GPU timestamps where the device has timestamp-query', async () => {
    expect(device.info.features).toContain('timestamp-query');
    const { trace, json, out } = await traced({}, 3);
    expect(trace.dispatchTiming).toBe('gpu-timestamp');
    expect(chromeTraceProblems(json)).toEqual([]);
    const dispatches = traceEventsOf(json, 'dispatch');
    // Sorted by start time; GPU passes of one submission may overlap (lavapipe's timestamps do).
    expect(dispatches.map((d) => d.name).sort()).toEqual([
      ...Array(3).fill('double'),
      ...Array(6).fill('negate'),
    ]);
    for (const d of dispatches) {
      expect(d.args?.timing).toBe('gpu-timestamp');
      expect(d.args?.executable).toBe('cts negateDouble');
    }
    // Full-precision timestamps (Keel turns Dawn's 65 536 ns quantization off in Node).
    expect(dispatches.some((d) => Math.round(d.dur * 1000) % 65536 !== 0)).toBe(true);
    // Each step maps a = x to b = 2x (and a = -2x): three steps give b = 8x, as without a trace.
    expect(out[5]).toBe(40);
  });

  it('marks host estimates when timestamps are off', async () => {
    const { trace, json } = await traced({ gpuTimestamps: false }, 2);
    expect(trace.dispatchTiming).toBe('host-estimate');
    expect(chromeTraceProblems(json)).toEqual([]);
    const dispatches = traceEventsOf(json, 'dispatch');
    expect(dispatches).toHaveLength(6);
    for (const d of dispatches) expect(d.args?.timing).toBe('host-estimate');
  });

  it('records no dispatch entries with dispatches: false, and queue operations still', async () => {
    const { trace, json } = await traced({ dispatches: false }, 2);
    expect(trace.dispatchTiming).toBe('none');
    expect(traceEventsOf(json, 'dispatch')).toHaveLength(0);
    expect(traceEventsOf(json, 'queue').filter((e) => e.name === 'queueExecute')).toHaveLength(2);
  });

  it('reports the operations that device loss fails, with args.error', async () => {
    const lost = await createWebGpuDevice({ onUnhandledFailure: () => {} });
    try {
      const buffer = lost.createBuffer({ byteLength: 64, usage: BufferUsage.DEFAULT });
      const gate = new TimelineSemaphore();
      const s = new TimelineSemaphore();
      const trace = lost.startTrace();
      // One in the open submission batch (not submitted yet), one deferred behind a host wait.
      lost.queueFill(Q0, Fence.empty, Fence.of({ semaphore: s, value: 1 }), { buffer }, 1, 4);
      lost.queueFill(
        Q0,
        Fence.of({ semaphore: gate, value: 1 }),
        Fence.of({ semaphore: s, value: 2 }),
        { buffer },
        2,
        4,
      );
      lost.gpuDevice.destroy();
      await lost.lost;
      await expect(s.wait(2, { timeoutMs: 5000 })).rejects.toThrow();
      const json = JSON.parse(JSON.stringify(await trace.toChromeTrace())) as unknown;
      expect(chromeTraceProblems(json)).toEqual([]);
      const fills = traceEventsOf(json, 'queue').filter((e) => e.name === 'queueFill');
      expect(fills).toHaveLength(2);
      for (const fill of fills) expect(fill.args?.error).toMatch(/^UNAVAILABLE: /);
    } finally {
      await lost.destroy();
    }
  });
});

describe('dawnFlags', () => {
  it('turns timestamp quantization off unless the caller names it', () => {
    expect(dawnFlags([])).toEqual(['disable-dawn-features=timestamp_quantization']);
    expect(dawnFlags(['disable-dawn-features=foo'])).toEqual([
      'disable-dawn-features=foo,timestamp_quantization',
    ]);
    expect(dawnFlags(['enable-dawn-features=timestamp_quantization'])).toEqual([
      'enable-dawn-features=timestamp_quantization',
    ]);
  });
});
