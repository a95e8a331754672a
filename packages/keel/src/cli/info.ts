/**
 * `keel info`: the devices Keel finds on this machine, with their queues, limits and features. The CPU
 * device is always there; WebGPU is reported when an adapter is found (navigator.gpu or Dawn).
 */
import os from 'node:os';
import { createCpuDevice } from '@keel/device-cpu';
import { createWebGpuDevice } from '@keel/device-webgpu';
import type { DeviceInfo } from '@keel/hal';
import type { Command } from 'commander';

export interface DeviceReport {
  readonly kind: 'cpu' | 'webgpu';
  readonly available: boolean;
  readonly info?: DeviceInfo;
  readonly reason?: string;
}

export async function probeDevices(): Promise<DeviceReport[]> {
  const reports: DeviceReport[] = [];
  const cpu = createCpuDevice({ mode: 'sync' });
  reports.push({ kind: 'cpu', available: true, info: cpu.info });
  await cpu.destroy();
  try {
    const gpu = await createWebGpuDevice();
    reports.push({ kind: 'webgpu', available: true, info: gpu.info });
    await gpu.destroy();
  } catch (error) {
    reports.push({
      kind: 'webgpu',
      available: false,
      reason: error instanceof Error ? error.message : String(error),
    });
  }
  return reports;
}

export function formatReports(reports: readonly DeviceReport[]): string {
  const lines = [
    `host: ${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? 'cpu'}, node ${process.version}`,
  ];
  for (const r of reports) {
    if (!r.available || r.info === undefined) {
      lines.push(`${r.kind}: unavailable (${r.reason ?? 'unknown reason'})`);
      continue;
    }
    const { info } = r;
    const l = info.limits;
    lines.push(`${r.kind}: ${info.name} (backend ${info.backend}, ${info.queueCount} queue(s))`);
    lines.push(`  max buffer ${l.maxBufferSize} B, max workgroups ${l.maxWorkgroupCount.join('×')}`);
    lines.push(
      `  max bindings ${l.maxBindings}, max constants ${l.maxConstants}, storage offset alignment ${l.minStorageBufferOffsetAlignment} B, max update ${l.maxUpdateSize} B`,
    );
    if (info.features.length > 0) lines.push(`  features: ${info.features.join(', ')}`);
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
      process.stdout.write(
        options.json ? `${JSON.stringify(reports, null, 2)}\n` : `${formatReports(reports)}\n`,
      );
      // Dawn can keep the loop alive after its device is destroyed; everything is printed, so exit.
      process.exit(0);
    });
}
