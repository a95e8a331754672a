/**
 * `keel info`: the devices Keel finds on this machine, each opened exactly as `keel demo` opens it
 * (the same code: `openTrainingDevice`), so what it shows are the demo's defaults: the CPU device in
 * task mode with two queues (compute, upload) and every core on the compute queue; WebGPU with two
 * queues, reported when an adapter is found (navigator.gpu or Dawn). Also the demo's default steps and
 * batch per device, and the WebGPU adapters Dawn offers, by the index `keel demo --devices webgpu:I`
 * takes (`listWebGpuAdapters`). For the CPU device, which GEMM build its kernels run: relaxed SIMD
 * (fused multiply-add) or plain SIMD (cli/relaxed-simd.ts).
 */
import os from 'node:os';
import { CpuDevice } from '@keel/device-cpu';
import { listWebGpuAdapters, type WebGpuAdapterEntry } from '@keel/device-webgpu';
import { describeValue } from '@keel/fence';
import type { DeviceInfo } from '@keel/hal';
import { DEFAULT_STEPS, openTrainingDevice, REFERENCE_MLP, type TrainDeviceKind } from '@keel/mlp';
import type { Command } from 'commander';
import { relaxedSimdAvailable } from './relaxed-simd';

export interface DeviceReport {
  readonly kind: TrainDeviceKind;
  readonly available: boolean;
  readonly info?: DeviceInfo;
  readonly reason?: string;
  /** CPU device: 'task' or 'sync', as `keel demo` opens it. */
  readonly mode?: string;
  /** CPU device: worker threads per queue, as `keel demo` opens it. */
  readonly workersPerQueue?: number;
  /** CPU device: the GEMM build its kernels run ('relaxed-simd': fused multiply-add; 'simd'). */
  readonly gemm?: 'relaxed-simd' | 'simd';
  /** What `keel demo --device <kind>` runs by default. */
  readonly demo: { readonly steps: number; readonly batch: number };
}

async function probe(kind: TrainDeviceKind): Promise<DeviceReport> {
  const demo = { steps: DEFAULT_STEPS[kind], batch: REFERENCE_MLP.batch };
  try {
    const { device } = await openTrainingDevice({ device: kind });
    try {
      if (device instanceof CpuDevice) {
        return {
          kind,
          available: true,
          info: device.info,
          mode: device.mode,
          workersPerQueue: device.workersPerQueue,
          gemm: relaxedSimdAvailable() ? 'relaxed-simd' : 'simd',
          demo,
        };
      }
      return { kind, available: true, info: device.info, demo };
    } finally {
      await device.destroy();
    }
  } catch (error) {
    return {
      kind,
      available: false,
      reason: error instanceof Error ? error.message : describeValue(error),
      demo,
    };
  }
}

export async function probeDevices(): Promise<DeviceReport[]> {
  return [await probe('cpu'), await probe('webgpu')];
}

/** The WebGPU adapters (`webgpu:I` of `keel demo --devices`); empty when there is no WebGPU. */
export async function probeAdapters(): Promise<WebGpuAdapterEntry[]> {
  try {
    return await listWebGpuAdapters();
  } catch {
    return [];
  }
}

/** The adapter lines of `keel info`. */
export function formatAdapters(adapters: readonly WebGpuAdapterEntry[]): string {
  if (adapters.length === 0) return 'webgpu adapters: none';
  return [
    `webgpu adapters (keel demo --devices webgpu:I):`,
    ...adapters.map(
      (a) =>
        `  webgpu:${a.index}  ${a.name} (${a.backend})${
          a.selectable ? '' : ' — same name as an earlier adapter: Dawn cannot select it in this process'
        }`,
    ),
  ].join('\n');
}

export function formatReports(reports: readonly DeviceReport[]): string {
  const lines = [
    `host: ${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? 'cpu'}, node ${process.version}`,
  ];
  for (const r of reports) {
    if (!r.available || r.info === undefined) {
      lines.push(`${r.kind}: unavailable (${(r.reason ?? 'unknown reason').split('\n')[0]})`);
      continue;
    }
    const { info } = r;
    const l = info.limits;
    // The CPU device's name already says its mode and workers ("cpu (task, 2×2 workers)").
    lines.push(`${r.kind}: ${info.name} (backend ${info.backend}, ${info.queueCount} queue(s))`);
    lines.push(`  keel demo --device ${r.kind}: ${r.demo.steps} steps, batch ${r.demo.batch}`);
    lines.push(`  max buffer ${l.maxBufferSize} B, max workgroups ${l.maxWorkgroupCount.join('×')}`);
    lines.push(
      `  max bindings ${l.maxBindings}, max constants ${l.maxConstants}, storage offset alignment ${l.minStorageBufferOffsetAlignment} B, max update ${l.maxUpdateSize} B`,
    );
    if (info.features.length > 0) lines.push(`  features: ${info.features.join(', ')}`);
    if (r.gemm !== undefined) {
      lines.push(
        `  mlp GEMM: ${r.gemm === 'relaxed-simd' ? 'relaxed SIMD (fused multiply-add)' : 'plain SIMD (this engine has no relaxed SIMD, or KEEL_RELAXED_SIMD=0)'}`,
      );
    }
  }
  return lines.join('\n');
}

export function infoCommand(parent: Command): Command {
  return parent
    .command('info')
    .description('devices and adapters found, with their limits')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const reports = await probeDevices();
      const adapters = await probeAdapters();
      // JSON: the adapters ride on the webgpu report (the array shape stays what it was).
      const json = reports.map((r) => (r.kind === 'webgpu' ? { ...r, adapters } : r));
      process.stdout.write(
        options.json
          ? `${JSON.stringify(json, null, 2)}\n`
          : `${formatReports(reports)}\n${formatAdapters(adapters)}\n`,
      );
      // Dawn can keep the loop alive after its device is destroyed; everything is printed, so exit.
      process.exit(0);
    });
}
