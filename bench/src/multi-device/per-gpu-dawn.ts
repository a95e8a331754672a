/**
 * One Dawn device per physical GPU where the GPUs are identical (the GPU machine's 2×H200): the
 * `webgpu` package selects an adapter only by name (the first whose name matches), so the second of two
 * identical GPUs is out of its reach. Below Dawn, Mesa's Vulkan device-select layer
 * (`VK_LAYER_MESA_device_select`, carried with its libraries in `.vklayer/` and enabled by the command's
 * `VK_LAYER_PATH` / `VK_INSTANCE_LAYERS` / `LD_LIBRARY_PATH`) reads `DRI_PRIME=pci-DDDD_BB_DD_F` and
 * `MESA_VK_DEVICE_SELECT_FORCE_DEFAULT_DEVICE=1` each time a Vulkan instance is created and then shows
 * that instance only the GPU at that PCI address. Each Dawn instance (`create()`) makes its own Vulkan
 * instance at its first `requestAdapter`, so setting those variables before each one gives one Dawn
 * instance per GPU inside one process. Bench-only: the library documents the limit instead.
 */
import { spawnSync } from 'node:child_process';
import { createWebGpuDevice } from '@keel/device-webgpu';
import type { Device } from '@keel/hal';
import { create } from 'webgpu';
import type { DeviceOpener } from './scaling.ts';

/** Dawn instances must stay reachable while their devices live. */
const instances: GPU[] = [];

/** `00000000:19:00.0` (nvidia-smi) → `pci-0000_19_00_0` (the device-select layer's tag). */
export function driPrimeTag(busId: string): string {
  const m = /^([0-9a-fA-F]+):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$/.exec(busId.trim());
  if (m === null) throw new Error(`'${busId}' is not a PCI bus id such as 00000000:19:00.0`);
  const domain = Number.parseInt(m[1]!, 16).toString(16).padStart(4, '0');
  return `pci-${domain}_${m[2]!.toLowerCase()}_${m[3]!.toLowerCase()}_${m[4]}`;
}

/** The PCI bus ids nvidia-smi reports, in its order ([] where it is absent). */
export function nvidiaBusIds(): string[] {
  const r = spawnSync('nvidia-smi', ['--query-gpu=pci.bus_id', '--format=csv,noheader'], {
    encoding: 'utf8',
  });
  if (r.status !== 0 || typeof r.stdout !== 'string') return [];
  return r.stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
}

/** Memory used per GPU (MiB), as nvidia-smi reports it: shows which GPUs hold a context. */
export function nvidiaMemoryUsed(): string {
  const r = spawnSync('nvidia-smi', ['--query-gpu=index,pci.bus_id,memory.used', '--format=csv,noheader'], {
    encoding: 'utf8',
  });
  return r.status === 0 ? r.stdout.trim().replace(/\n/g, '; ') : 'nvidia-smi unavailable';
}

async function openOnBus(busId: string, label: string): Promise<Device> {
  const saved = {
    DRI_PRIME: process.env.DRI_PRIME,
    MESA_VK_DEVICE_SELECT_FORCE_DEFAULT_DEVICE: process.env.MESA_VK_DEVICE_SELECT_FORCE_DEFAULT_DEVICE,
  };
  process.env.DRI_PRIME = `${driPrimeTag(busId)}!`;
  process.env.MESA_VK_DEVICE_SELECT_FORCE_DEFAULT_DEVICE = '1';
  try {
    const gpu = create(['disable-dawn-features=timestamp_quantization']);
    instances.push(gpu);
    const adapter = await gpu.requestAdapter();
    if (adapter === null) throw new Error(`no WebGPU adapter on the GPU at ${busId}`);
    return await createWebGpuDevice({ adapter, queueCount: 2, label });
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/** An opener of one Keel WebGPU device on each GPU of `busIds`. */
export function perGpuOpener(busIds: readonly string[], log: (line: string) => void): DeviceOpener {
  return {
    describe: busIds.map((b, i) => `webgpu@${b}#${i}`).join(','),
    async open() {
      const devices: Device[] = [];
      try {
        for (let i = 0; i < busIds.length; i++) devices.push(await openOnBus(busIds[i]!, `gpu${i}`));
      } catch (error) {
        for (const d of devices) await d.destroy().catch(() => {});
        throw error;
      }
      log(`opened ${devices.length} devices by PCI bus; GPU memory used: ${nvidiaMemoryUsed()}`);
      return devices;
    },
  };
}
