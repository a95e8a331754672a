/**
 * `trainMlpDataParallel`: data-parallel training of the reference MLP over several Keel devices, every
 * queue operation placed by `@keel/scheduler` (Glow's colocated partitions, seed 001; IREE's
 * multi-queue affinity, seed 003).
 *
 * Each device holds a replica of the parameters (replica.ts: one packed tensor resident through its
 * ResidencyManager, leased read-write for the run) and trains on its shard of each global batch
 * (gradient-program.ts: gradients, not updates). Per step k, through `Scheduler.submit`, with each
 * device's operations restricted to that device's two targets (compute, upload) and placed among them by
 * the scheduler's policy (producer, join, least-loaded), and the reduction free to go anywhere:
 *
 * 1. `write` ×2 per device: its shard of batch k (x, labels), waiting until step k-1 no longer reads them;
 * 2. `alloca` of the step's arena; `execute` of the recorded gradient step (binding table: replica,
 *    gradients, shard, arena), waiting the shard, the arena and the weights of step k-1 on this replica;
 * 3. `read` of the gradients and the shard loss to host memory (one read of the packed gradients; none
 *    on a device with host mapping, the CPU device, whose gradient buffer is pinned host memory that
 *    the reduction reads in place); `dealloca` of the arena;
 * 4. one `host-call` (the reduction) waiting the JOIN of every device's read: the gradients summed in
 *    device order, weighted by shard size (Σ_d rows_d/B · g_d: the gradient of the global mean loss,
 *    deterministic for a given sharding), and the SGD update applied once to the host copy of the
 *    weights: `w -= lr · g`;
 * 5. `write` of the updated weights into every replica (the broadcast), waiting the reduction.
 *
 * So every replica holds the same bytes after every step (`replicasIdentical` checks it at the end), and
 * only gradients (device → host) and weights (host → device) cross between devices: the activations
 * never leave their device. Batch k+1 uploads while step k computes. Shards are even, or sized by
 * measured speed and re-balanced as the run goes (shard-balancer.ts) when the devices differ: each
 * device's compute time is taken by two host calls per step on its upload queue (step-timer.ts;
 * submitted to the device directly, not through the scheduler: measurement, not the step's work, so
 * `placement` does not count them), and a plan made after
 * step k was measured applies from step k+2 (shard k+1 was uploaded while step k computed); no plan is
 * made after step steps - 3, so every plan applies and `rebalances` = `shards.length - 1`.
 *
 * Errors, all before anything opens but the last three: INVALID_ARGUMENT / OUT_OF_RANGE for bad
 * options, device lists or caller devices, FAILED_PRECONDITION for a caller device already lost or
 * destroyed (device-list.ts); UNAVAILABLE when a WebGPU adapter cannot be opened; CANCELLED through
 * `abortSignal` (checked before each step and once more after the last loss arrived); any device
 * error of a step: the run stops and rethrows the root cause (run-failure.ts: the lost device's reason
 * when a device was lost). Devices the run opened are always destroyed.
 */
import { Fence, type Semaphore, type Timepoint } from '@keel/fence';
import { BufferUsage, type Device, QueueAffinity } from '@keel/hal';
import { Scheduler, type SchedulerTarget } from '@keel/scheduler';
import { ensureOnHost } from '@keel/tensor-residency';
import { type Batch, REFERENCE_DATASET, SyntheticDataset } from '../dataset';
import { initParams, type MlpConfig, type MlpParams, REFERENCE_MLP } from '../model';
import { createMlpExecutable } from '../train/open-device';
import { trainCancelled } from '../train/train-options';
import {
  type DataParallelDeviceReport,
  resolveDataParallelOptions,
  type TrainDataParallelOptions,
  type TrainDataParallelResult,
} from './data-parallel-options';
import { checkBatchCoversDevices, checkCallerDevices, openDeviceList, parseDeviceList } from './device-list';
import {
  ARENA_SLOT,
  GRADS_SLOT,
  LABELS_SLOT,
  PARAMS_SLOT,
  type PackedParameters,
  packParameters,
  X_SLOT,
} from './gradient-program';
import { Replica } from './replica';
import { rootCause } from './run-failure';
import { ShardBalancer } from './shard-balancer';
import { StepTimer } from './step-timer';

const at = (semaphore: Semaphore, value: number): Timepoint => ({ semaphore, value });

const WHAT = 'trainMlpDataParallel';
/** Names the `devices` option in messages. */
const DEVICES = `${WHAT}: devices`;

function median(values: readonly number[]): number {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The parameters packed as `packed` lays them out (padding zero). */
function packParams(params: MlpParams, packed: PackedParameters): Float32Array<ArrayBuffer> {
  const out = new Float32Array(packed.packedBytes / 4);
  packed.names.forEach((name, i) => {
    const layer = Number(name.slice(1));
    const source = name.startsWith('w') ? params.weights[layer]! : params.biases[layer]!;
    out.set(source, packed.offsets[i]! / 4);
  });
  return out;
}

function unpackParams(flat: Float32Array, packed: PackedParameters, layers: number): MlpParams {
  const weights: Float32Array<ArrayBuffer>[] = new Array(layers);
  const biases: Float32Array<ArrayBuffer>[] = new Array(layers);
  packed.names.forEach((name, i) => {
    const layer = Number(name.slice(1));
    const view = flat.slice(packed.offsets[i]! / 4, (packed.offsets[i]! + packed.bytes[i]!) / 4);
    if (name.startsWith('w')) weights[layer] = view;
    else biases[layer] = view;
  });
  return { weights, biases };
}

/** Trains the reference MLP data-parallel over `options.devices`; see the file comment. */
export async function trainMlpDataParallel(
  options: TrainDataParallelOptions,
): Promise<TrainDataParallelResult> {
  const started = performance.now();
  const { steps, batch, warmup } = resolveDataParallelOptions(options);
  const signal = options.abortSignal;
  if (signal?.aborted) throw trainCancelled(signal, 0, WHAT);
  const config: MlpConfig = { ...REFERENCE_MLP, batch };
  const d0 = config.layers;
  const inputSize = d0[0]!;
  const dataset = new SyntheticDataset({ ...REFERENCE_DATASET, inputSize, classes: d0[d0.length - 1]! });
  const pregenerated =
    options.pregeneratedBatches === undefined
      ? undefined
      : Array.from({ length: options.pregeneratedBatches }, (_, i) => dataset.batch(i, batch));
  const batchAt = (k: number): Batch =>
    pregenerated === undefined ? dataset.batch(k, batch) : pregenerated[k % pregenerated.length]!;

  let devices: Device[];
  let labels: string[];
  let owned: boolean;
  if (typeof options.devices === 'string') {
    const entries = parseDeviceList(options.devices, DEVICES);
    checkBatchCoversDevices(batch, entries.length, `${WHAT}: batch`);
    devices = await openDeviceList(entries, {
      ...(options.workers === undefined ? {} : { workers: options.workers }),
      what: DEVICES,
    });
    labels = entries.map((e) => e.label);
    owned = true;
  } else {
    const given: unknown[] = [...options.devices];
    checkCallerDevices(given, DEVICES);
    checkBatchCoversDevices(batch, given.length, `${WHAT}: batch`);
    devices = given;
    labels = devices.map((_, i) => `device${i}`);
    owned = false;
  }
  const n = devices.length;
  const replicas: Replica[] = [];
  let submitted = 0;
  try {
    const alignment = Math.max(256, ...devices.map((d) => d.info.limits.minStorageBufferOffsetAlignment));
    const packed = packParameters(config, alignment);
    const master = packParams(initParams(config), packed);
    const masterBytes = new Uint8Array(master.buffer, 0, packed.packedBytes);
    for (let d = 0; d < n; d++) {
      const device = devices[d]!;
      const executable = await createMlpExecutable(WHAT, device, options.cpuKernelUrl);
      replicas.push(new Replica(d, labels[d]!, device, executable, config, packed, master));
    }
    const targets: SchedulerTarget[] = devices.flatMap((device, d) =>
      [0, 1].map((queue) => ({ device, queue, label: `${labels[d]} ${queue === 0 ? 'compute' : 'upload'}` })),
    );
    const scheduler = new Scheduler(targets, { trace: options.traceCapacity ?? 256 });
    const mask = devices.map((_, d) => (3 << (2 * d)) >>> 0);
    const reduced = devices[0]!.createSemaphore(0);
    // Equal devices (CPU devices of one host, or WebGPU devices of one adapter model) get even shards.
    const firstInfo = devices[0]!.info;
    const sameKind = devices.every(
      (d) =>
        d.info.backend === firstInfo.backend &&
        (firstInfo.backend === 'cpu' || d.info.name === firstInfo.name),
    );
    const balance = options.balance ?? (sameKind ? 'even' : 'measured');
    const balancer = new ShardBalancer(balance, batch, n, options.granule ?? 8, options.rebalanceEvery ?? 5);
    const shards: { step: number; rows: readonly number[] }[] = [{ step: 0, rows: balancer.rows.slice() }];
    const timer = balance === 'measured' ? new StepTimer(devices) : undefined;
    const rowsOf: (readonly number[])[] = new Array(steps);
    options.onStart?.({ devices: replicas.map((r) => ({ label: r.label, name: r.device.info.name })) });

    const losses = new Float32Array(steps);
    const stepMs = new Array<number>(steps).fill(0);
    const lr = Math.fround(config.learningRate);
    const paramFloats = packed.packedBytes / 4;
    const lossIndex = packed.lossOffset / 4;
    const acc = new Float64Array(n > 2 ? paramFloats : 0);
    let batchesToDevice = 0;

    const uploadShard = (k: number): void => {
      const rows = rowsOf[k]!;
      const b = batchAt(k);
      let offset = 0;
      for (let d = 0; d < n; d++) {
        const r = replicas[d]!;
        const count = rows[d]!;
        const xs = b.x.subarray(offset * inputSize, (offset + count) * inputSize);
        const ls = b.labels.subarray(offset, offset + count);
        offset += count;
        const xWritten = Fence.of(at(r.upload, 2 * k + 1));
        scheduler.submit(
          { kind: 'write', source: xs, target: { buffer: r.x, length: xs.byteLength } },
          {
            affinity: mask[d]!,
            wait: k === 0 ? Fence.empty : Fence.of(at(r.upload, 2 * k), at(r.exec, k)),
            signalFence: xWritten,
          },
        );
        scheduler.submit(
          { kind: 'write', source: ls, target: { buffer: r.labels, length: ls.byteLength } },
          { affinity: mask[d]!, wait: xWritten, signalFence: Fence.of(at(r.upload, 2 * k + 2)) },
        );
        batchesToDevice += xs.byteLength + ls.byteLength;
      }
    };

    // The reduction of step k (runs on the host once every device's gradients arrived). One fused pass
    // for one or two devices (the same f64 operations in the same order as the general case, so the
    // results are bit-identical), accumulate-then-update passes for more.
    const reduce = (k: number): void => {
      const rows = rowsOf[k]!;
      let loss = 0;
      for (let d = 0; d < n; d++) loss += (rows[d]! / batch) * replicas[d]!.gradsHost[lossIndex]!;
      losses[k] = loss;
      if (n === 1) {
        const a = replicas[0]!.gradsHost;
        const wa = rows[0]! / batch;
        for (let i = 0; i < paramFloats; i++) master[i] = master[i]! - lr * (wa * a[i]!);
        return;
      }
      if (n === 2) {
        const a = replicas[0]!.gradsHost;
        const b = replicas[1]!.gradsHost;
        const wa = rows[0]! / batch;
        const wb = rows[1]! / batch;
        for (let i = 0; i < paramFloats; i++) master[i] = master[i]! - lr * (wa * a[i]! + wb * b[i]!);
        return;
      }
      for (let d = 0; d < n; d++) {
        const g = replicas[d]!.gradsHost;
        const w = rows[d]! / batch;
        if (d === 0) for (let i = 0; i < paramFloats; i++) acc[i] = w * g[i]!;
        else for (let i = 0; i < paramFloats; i++) acc[i]! += w * g[i]!;
      }
      for (let i = 0; i < paramFloats; i++) master[i] = master[i]! - lr * acc[i]!;
    };

    const submitStep = (k: number): void => {
      const rows = rowsOf[k]!;
      for (let d = 0; d < n; d++) {
        const r = replicas[d]!;
        // Timed from here, before the device's operations are submitted, at the earliest once its
        // inputs are ready on the host side: the reduced weights and its shard.
        timer?.submit(
          d,
          k,
          Fence.join(k === 0 ? r.lease.wait : Fence.of(at(reduced, k)), Fence.of(at(r.upload, 2 * k + 2))),
          at(r.exec, k + 1),
        );
        const recorded = r.stepFor(rows[d]!);
        const arena = scheduler.submit(
          {
            kind: 'alloca',
            params: { usage: BufferUsage.DISPATCH_STORAGE, label: `mlp shard arena@${r.label}` },
            size: recorded.step.arenaBytes,
          },
          {
            affinity: mask[d]!,
            wait: k === 0 ? Fence.empty : Fence.of(at(r.exec, k), at(r.alloc, k)),
            signalFence: Fence.of(at(r.alloc, k + 1)),
          },
        );
        const t = r.table;
        t[PARAMS_SLOT] = r.lease.ref;
        t[GRADS_SLOT] = { buffer: r.grads };
        t[X_SLOT] = { buffer: r.x, length: recorded.step.xBytes };
        t[LABELS_SLOT] = { buffer: r.labels, length: recorded.step.labelsBytes };
        t[ARENA_SLOT] = { buffer: arena };
        const done = Fence.of(at(r.exec, k + 1));
        scheduler.submit(
          { kind: 'execute', commandBuffers: recorded.commandBuffers, bindingTables: r.tables },
          {
            affinity: mask[d]!,
            wait: Fence.join(
              k === 0 ? r.lease.wait : Fence.of(at(r.bcast, k)),
              Fence.of(at(r.alloc, k + 1), at(r.upload, 2 * k + 2)),
            ),
            signalFence: done,
          },
        );
        // Pinned gradients are on the host as soon as the step is done: nothing to read.
        if (!r.pinned) {
          scheduler.submit(
            { kind: 'read', source: { buffer: r.grads }, target: r.gradsHost },
            { affinity: mask[d]!, wait: done, signalFence: Fence.of(at(r.read, k + 1)) },
          );
        }
        scheduler.submit(
          { kind: 'dealloca', buffer: arena },
          { affinity: mask[d]!, wait: done, signalFence: Fence.of(at(r.dealloc, k + 1)) },
        );
      }
      const gradientsIn = Fence.of(
        ...replicas.map((r) => (r.pinned ? at(r.exec, k + 1) : at(r.read, k + 1))),
      );
      const weightsOut = Fence.of(at(reduced, k + 1));
      scheduler.submit(
        { kind: 'host-call', callback: () => reduce(k) },
        { affinity: QueueAffinity.ANY, wait: gradientsIn, signalFence: weightsOut },
      );
      for (let d = 0; d < n; d++) {
        const r = replicas[d]!;
        scheduler.submit(
          { kind: 'write', source: masterBytes, target: r.lease.ref },
          { affinity: mask[d]!, wait: weightsOut, signalFence: Fence.of(at(r.bcast, k + 1)) },
        );
      }
      submitted = k + 1;
    };

    const t0 = performance.now();
    let last = t0;
    rowsOf[0] = balancer.rows.slice();
    uploadShard(0);
    for (let k = 0; k < steps; k++) {
      if (signal?.aborted) throw trainCancelled(signal, k, WHAT);
      submitStep(k);
      if (k + 1 < steps) {
        rowsOf[k + 1] = balancer.rows.slice();
        if (rowsOf[k + 1]!.some((r, d) => r !== rowsOf[k]![d]))
          shards.push({ step: k + 1, rows: rowsOf[k + 1]! });
        uploadShard(k + 1);
      }
      scheduler.flush();
      await reduced.wait(k + 1);
      const now = performance.now();
      stepMs[k] = now - last;
      last = now;
      options.onStep?.({ step: k + 1, steps, loss: losses[k]!, stepMs: stepMs[k]!, elapsedMs: now - t0 });
      // Step 0 pays for first use (pipelines, first touch): not a measure of speed. A failed step is
      // reported by the waits above; its timing is simply lost.
      if (timer !== undefined && (await timer.measured(k)) && k >= 1) {
        balancer.observe(rowsOf[k]!, timer.computeMs);
        // Shard k+1 is uploaded: a plan made now applies from step k+2, if there is one.
        if (k + 2 < steps) balancer.maybeRebalance(k);
      }
    }
    // An abort that came after the last submission (while the last loss was reduced) is honoured too.
    if (signal?.aborted) throw trainCancelled(signal, steps, WHAT);
    const trainMs = last - t0;

    for (const r of replicas) r.lease.release(Fence.of(at(r.bcast, steps)));
    const views = await ensureOnHost(replicas.map((r) => r.tensor));
    const first = new Uint8Array(views[0]!.buffer, views[0]!.byteOffset, views[0]!.byteLength);
    const replicasIdentical = views.every((v) => {
      const bytes = new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
      return bytes.length === first.length && bytes.every((b, i) => b === first[i]);
    });
    const params = unpackParams(views[0]!, packed, d0.length - 1);
    await Promise.all(replicas.map((r) => r.dealloc.wait(steps)));

    const reports: DataParallelDeviceReport[] = replicas.map((r, d) => ({
      label: r.label,
      name: r.device.info.name,
      backend: r.device.info.backend,
      rows: rowsOf[steps - 1]![d]!,
      pinned: r.pinned,
      rowsPerMs: balancer.speeds[d]!,
      recordings: r.recordings,
      dispatchesPerStep: r.stepFor(rowsOf[steps - 1]![d]!).dispatches,
    }));
    const counters = replicas.map((r) => r.manager.counters);
    const copied = replicas.filter((r) => !r.pinned).length;
    return {
      config,
      steps,
      warmup,
      losses,
      stepMs,
      msPerStep: median(stepMs.slice(warmup)),
      trainMs,
      totalMs: performance.now() - started,
      balance,
      rebalances: shards.length - 1,
      shards,
      devices: reports,
      transfers: {
        gradientsToHost: steps * copied * packed.gradsBytes,
        gradientsPinned: steps * (n - copied) * packed.gradsBytes,
        weightsToDevice: steps * n * packed.packedBytes,
        batchesToDevice,
        initialWeightsToDevice: counters.reduce((s, c) => s + c.hostToDeviceBytes, 0),
        finalWeightsToHost: counters.reduce((s, c) => s + c.deviceToHostBytes, 0),
        reductionBytesPerStep: n * (packed.gradsBytes + packed.packedBytes),
        minimumBytesPerStep: 2 * n * packed.gradientBytes,
        gradientBytesPerDevice: packed.gradientBytes,
      },
      replicasIdentical,
      params,
      placement: {
        targets: targets.map((t) => t.label!),
        stats: scheduler.stats(),
        trace: scheduler.trace(),
        operationsPerStep: 7 * n + 1 - (n - copied),
      },
    };
  } catch (error) {
    throw rootCause(error, devices);
  } finally {
    await cleanUp(replicas, submitted, owned ? devices : []);
  }
}

/** Waits for submitted work (ignoring failures), frees what the run made, destroys owned devices. */
async function cleanUp(
  replicas: readonly Replica[],
  submitted: number,
  owned: readonly Device[],
): Promise<void> {
  for (const r of replicas) {
    try {
      if (!r.lease.released) {
        if (submitted === 0) r.lease.cancel();
        else r.lease.release(Fence.of(at(r.bcast, submitted)));
      }
      await Promise.all([
        r.bcast.wait(submitted),
        r.dealloc.wait(submitted),
        r.upload.wait(2 * submitted),
      ]).catch(() => {});
      r.destroyBuffers();
      if (!r.tensor.released) r.tensor.release();
      await r.manager.dispose();
    } catch {
      // Best effort: a failed run leaves failed fences behind.
    }
  }
  for (const device of owned) await device.destroy().catch(() => {});
}
