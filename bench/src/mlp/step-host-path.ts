/**
 * The host path of `trainMlp`'s WebGPU step, isolated: the reference MLP at a tiny batch (default 1),
 * so that lavapipe's kernels take little time and what is left is the queue work between steps.
 * Reports, per step once warm: `queue.submit` calls, `onSubmittedWorkDone`, `mapAsync` and
 * `popErrorScope` requests, Keel queue operations (and those deferred: not submitted at their call,
 * waiting for a host round trip), the host time inside the queue methods, and the wall ms/step (median
 * of the rounds). On lavapipe the kernels run on the same 2 cores as the host, so the host times are
 * inflated under load; the counts are exact. With `--before DIR` (a built copy of @keel/mlp's `dist`,
 * e.g. `cp -r packages/mlp/dist packages/mlp/.before/` before a change), runs that build and this one
 * interleaved, round by round, order alternating. `--before-device DIR` does the same for a built copy of
 * @keel/device-webgpu's `dist` (the device of the "before" runs is created by that build).
 *
 *   pnpm --filter @keel/mlp build && node --import tsx bench/src/mlp/step-host-path.ts [--batch 1] [--steps 60] [--rounds 5] [--before packages/mlp/.before/dist] [--before-device DIR]
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createWebGpuDevice } from '@keel/device-webgpu';
import * as current from '@keel/mlp';
import { median } from '../harness.ts';

const { values } = parseArgs({
  options: {
    batch: { type: 'string', default: '1' },
    steps: { type: 'string', default: '60' },
    rounds: { type: 'string', default: '5' },
    before: { type: 'string' },
    'before-device': { type: 'string' },
  },
});
const batch = Number(values.batch);
const steps = Number(values.steps);
const rounds = Number(values.rounds);
const warm = 10;

const webgpu = await import('webgpu');
Object.assign(globalThis, webgpu.globals);
const gpu = webgpu.create([]);

const counts = { submit: 0, done: 0, map: 0, pop: 0, ops: 0, opUs: 0 };
/** Host µs in the queue methods (flush included) since the last step was reported, and per step. */
let stepUs = 0;
const perStepUs: number[] = [];
/** Host µs per queue method, summed over the steps after the warm-up of every round. */
const perMethod = new Map<string, number>();
let counting = false;
const QUEUE_METHODS = [
  'queueAlloca',
  'queueDealloca',
  'queueExecute',
  'queueRead',
  'queueWrite',
  'flush',
] as const;
const proto = (globalThis as unknown as { GPUBuffer: { prototype: GPUBuffer } }).GPUBuffer.prototype;
const mapAsync = proto.mapAsync;
proto.mapAsync = function (this: GPUBuffer, ...args: Parameters<GPUBuffer['mapAsync']>) {
  counts.map++;
  return mapAsync.apply(this, args);
};

type Train = typeof current.trainMlp;
type Create = typeof createWebGpuDevice;
const variants: [string, Train, Create][] = [['current', current.trainMlp, createWebGpuDevice]];
if (values.before !== undefined || values['before-device'] !== undefined) {
  const load = async <T>(dir: string): Promise<T> =>
    (await import(new URL(`file://${path.resolve(dir)}/index.js`).href)) as T;
  const before = values.before === undefined ? current : await load<typeof current>(values.before);
  const dir = values['before-device'];
  const create =
    dir === undefined
      ? createWebGpuDevice
      : (await load<{ createWebGpuDevice: Create }>(dir)).createWebGpuDevice;
  variants.unshift(['before', before.trainMlp, create]);
}

async function once(train: Train, create: Create) {
  const adapter = await gpu.requestAdapter();
  const raw = await adapter!.requestDevice();
  const queue = raw.queue;
  const submit = queue.submit.bind(queue);
  const done = queue.onSubmittedWorkDone.bind(queue);
  const pop = raw.popErrorScope.bind(raw);
  queue.submit = (list) => {
    counts.submit++;
    const t = performance.now();
    submit(list);
    if (counting)
      perMethod.set(
        '(queue.submit)',
        (perMethod.get('(queue.submit)') ?? 0) + (performance.now() - t) * 1000,
      );
  };
  queue.onSubmittedWorkDone = () => {
    counts.done++;
    return done();
  };
  raw.popErrorScope = () => {
    counts.pop++;
    return pop();
  };
  const device = await create({ device: raw, queueCount: 2 });
  // Host time inside the device's queue methods (the synchronous part: checks, scheduling, encoding).
  const methods = device as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const name of QUEUE_METHODS) {
    const method = methods[name]!.bind(device);
    methods[name] = (...args: unknown[]) => {
      const t = performance.now();
      try {
        return method(...args);
      } finally {
        const us = (performance.now() - t) * 1000;
        counts.opUs += us;
        if (counting) stepUs += us;
        if (counting) perMethod.set(name, (perMethod.get(name) ?? 0) + us);
        if (name !== 'flush') counts.ops++;
      }
    };
  }
  let atWarm = { ...counts, deferred: 0 };
  let atLast = { ...counts, deferred: 0 };
  try {
    const r = await train({
      device,
      steps,
      batch,
      warmup: warm,
      pregeneratedBatches: 4,
      onStep: (p) => {
        if (counting) perStepUs.push(stepUs);
        stepUs = 0;
        if (p.step === warm) {
          atWarm = { ...counts, deferred: device.stats.deferred };
          counting = true;
        }
        if (p.step === steps) {
          atLast = { ...counts, deferred: device.stats.deferred };
          counting = false;
        }
      },
    });
    const n = steps - warm;
    return {
      msPerStep: r.msPerStep,
      loss: r.losses[steps - 1]!,
      submit: (atLast.submit - atWarm.submit) / n,
      done: (atLast.done - atWarm.done) / n,
      map: (atLast.map - atWarm.map) / n,
      pop: (atLast.pop - atWarm.pop) / n,
      ops: (atLast.ops - atWarm.ops) / n,
      deferred: (atLast.deferred - atWarm.deferred) / n,
      opUs: (atLast.opUs - atWarm.opUs) / n,
      // The median step: preemption (lavapipe's threads, other processes) inflates the mean.
      medianUs: median(perStepUs.splice(0)),
    };
  } finally {
    await device.destroy();
    raw.destroy();
  }
}

const results = new Map<string, Awaited<ReturnType<typeof once>>[]>();
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? variants : [...variants].reverse();
  for (const [name, train, create] of order) {
    const r = await once(train, create);
    if (!results.has(name)) results.set(name, []);
    results.get(name)!.push(r);
  }
}
for (const [name, rs] of results) {
  const last = rs.at(-1)!;
  console.log(
    `${name}: batch ${batch}, ${steps} steps (${warm} warm-up) x ${rounds} rounds: ` +
      `${median(rs.map((r) => r.msPerStep)).toFixed(3)} ms/step (rounds: ${rs.map((r) => r.msPerStep.toFixed(2)).join(' ')}); ` +
      `per step: queue ops ${last.ops.toFixed(2)} taking ${median(rs.map((r) => r.opUs)).toFixed(0)} µs of host time (median step ${median(rs.map((r) => r.medianUs)).toFixed(0)} µs), ${last.deferred.toFixed(2)} deferred (submitted only after a host round trip), submit ${last.submit.toFixed(2)}, onSubmittedWorkDone ${last.done.toFixed(2)}, mapAsync ${last.map.toFixed(2)}, popErrorScope ${last.pop.toFixed(2)}; last loss ${last.loss}`,
  );
}
const timed = rounds * variants.length * (steps - warm);
console.log(
  `host µs per step in each queue method (mean over ${timed} steps, all variants): ${[...perMethod].map(([k, v]) => `${k} ${(v / timed).toFixed(1)}`).join(', ')}`,
);
