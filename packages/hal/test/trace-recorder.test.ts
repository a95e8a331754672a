/**
 * The trace recorder's track ids (hal README § Traces): every track of every queue (32 at most),
 * worker (the CPU device allows 256 per queue) and lane (9) gets its own `tid`, named after it in
 * `otherData.tracks`, so no two tracks of a device share one.
 */
import { describe, expect, it } from 'vitest';
import { newTracePid, TraceRecorder } from '../src/driver/index';
import type { DeviceInfo } from '../src/index';

const INFO = { name: 'test', backend: 'cpu', queueCount: 32 } as unknown as DeviceInfo;

function recorder(): TraceRecorder {
  return new TraceRecorder(INFO, {}, 'cpu-wall', newTracePid(), () => {});
}

describe('trace recorder tracks', () => {
  it('gives worker w ≥ 100 of queue q a track of its own, not worker w − 100 of queue q + 1', () => {
    const trace = recorder();
    trace.worker(0, 100, 'k', 1, 2, { queue: 0, worker: 100 });
    trace.worker(1, 0, 'k', 1, 2, { queue: 1, worker: 0 });
    const json = trace.toJSON();
    const [a, b] = json.traceEvents;
    expect(a!.tid).not.toBe(b!.tid);
    const names = json.otherData.tracks as Record<string, string>;
    const byWorker = new Map(json.traceEvents.map((e) => [e.args?.worker, names[String(e.tid)]]));
    expect(byWorker.get(100)).toBe('queue 0 worker 100');
    expect(byWorker.get(0)).toBe('queue 1 worker 0');
  });

  it('keeps every track and lane of 32 queues × 256 workers × 9 lanes apart', () => {
    const trace = recorder();
    const t = trace.originMs;
    // Nine overlapping events per track fill its nine lanes.
    for (let q = 0; q < 32; q++) {
      for (let lane = 0; lane < 9; lane++) {
        trace.add('op', 'queue', q, t, t + 1, { queue: q, lane });
        trace.add('wait', 'wait', 30000 + q, t, t + 1, { queue: q, lane });
        trace.dispatch(q, 'd', t, t + 1, { queue: q, lane });
        for (let w = 0; w < 256; w++) trace.worker(q, w, 'k', t, t + 1, { queue: q, worker: w, lane });
      }
    }
    const json = trace.toJSON();
    const owner = new Map<number, string>();
    for (const e of json.traceEvents) {
      const track = `${e.cat} ${e.args?.queue} ${e.args?.worker ?? ''}`;
      const seen = owner.get(e.tid);
      if (seen !== undefined) expect(`${e.tid}: ${seen}`).toBe(`${e.tid}: ${track}`);
      owner.set(e.tid, track);
    }
    // 32 queues × (queue, wait, dispatch, 256 workers) × 9 lanes, every one a track of its own.
    expect(owner.size).toBe(32 * (3 + 256) * 9);
    const names = Object.values(json.otherData.tracks as Record<string, string>);
    expect(new Set(names).size).toBe(names.length);
    for (const tid of owner.keys()) expect(tid).toBeLessThan(2 ** 31);
  });

  it('exports the pid it was given', () => {
    const pid = newTracePid();
    const trace = new TraceRecorder(INFO, {}, 'none', pid, () => {});
    trace.add('op', 'queue', 0, trace.originMs, trace.originMs + 1);
    expect(trace.toJSON().traceEvents[0]!.pid).toBe(pid);
  });
});
