/**
 * Dawn for the Node build: the optional `webgpu` package (Dawn's node bindings), where there is no
 * `navigator.gpu`. The browser build resolves `./platform/dawn` to dawn.browser.ts instead (chosen at
 * build time, tsup.config.ts), so no Dawn loading is in a browser bundle.
 */
import { ErrorCode, KeelError } from '@keel/fence';

/** The shape of the `webgpu` package's exports that Keel uses. */
interface DawnModule {
  create(options: string[]): GPU;
  globals: Record<string, unknown>;
}

/** Whether this build can load Dawn (the Node build: true). */
export const HAS_DAWN = true;

/**
 * Dawn's flags: the caller's, plus `disable-dawn-features=timestamp_quantization` unless the caller
 * names that feature in a `disable-`/`enable-dawn-features` flag. Dawn rounds GPU timestamps down to
 * 65 536 ns by default (a browser's defence against timing attacks), which would make per-dispatch
 * times of traces useless for kernels of a few µs; a Node process has no cross-origin code to defend
 * against.
 */
export function dawnFlags(options: readonly string[]): string[] {
  if (options.some((o) => o.includes('timestamp_quantization'))) return [...options];
  const disable = options.findIndex((o) => o.startsWith('disable-dawn-features='));
  if (disable < 0) return [...options, 'disable-dawn-features=timestamp_quantization'];
  const flags = [...options];
  flags[disable] = `${flags[disable]},timestamp_quantization`;
  return flags;
}

/**
 * Loads Dawn through the `webgpu` package (Node only). Its globals (GPUBufferUsage, ...) are installed
 * where absent, so application code that uses them works as in a browser.
 */
export async function loadDawn(options: readonly string[]): Promise<GPU> {
  // A computed specifier keeps bundlers (vite, esbuild) from resolving the Node-only package.
  const specifier = ['web', 'gpu'].join('');
  let mod: DawnModule;
  try {
    mod = (await import(/* @vite-ignore */ specifier)) as DawnModule;
  } catch (cause) {
    throw new KeelError(
      ErrorCode.UNAVAILABLE,
      "createWebGpuDevice: no navigator.gpu and the optional 'webgpu' package (Dawn for Node) could not be loaded; install it or pass a GPUDevice",
      { cause },
    );
  }
  const g = globalThis as Record<string, unknown>;
  for (const [name, value] of Object.entries(mod.globals)) if (g[name] === undefined) g[name] = value;
  return mod.create([...options]);
}
