/**
 * `runConformanceCases`: the conformance suite without a test runner, for machines that have a device
 * but no vitest (the GPU machines run it from a bundled entry, bench/src/gpu-cts-entry.ts). Same
 * protocol as `defineDeviceConformance`: one device for the run, a fresh CtsContext per case and ref
 * mode, cases that record commands in both modes, every wait with a timeout. Never throws for a
 * failing case: each outcome says whether it passed and, if not, the error's text.
 */
import type { CtsCase } from './case';
import { CTS_CASES } from './cases/all';
import { type CreateCtsDevice, CtsContext, type CtsDeviceOptions, type RefMode } from './context';

export interface CaseOutcome {
  /** `id` or `id [mode]` for cases that record commands. */
  readonly name: string;
  readonly ok: boolean;
  readonly ms: number;
  /** The failure, as text (code and message for a KeelError). */
  readonly error?: string;
}

function describeFailure(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return `${typeof code === 'string' ? `${code}: ` : ''}${error.message}`;
  }
  return String(error);
}

/** Runs `cases` (default: every case) on a device from `createDevice`; resolves every outcome. */
export async function runConformanceCases(
  createDevice: CreateCtsDevice,
  options: { readonly timeoutMs?: number; readonly cases?: readonly CtsCase[] } = {},
): Promise<CaseOutcome[]> {
  const timeoutMs = options.timeoutMs ?? 5000;
  const extra = {
    createDevice: async (deviceOptions?: CtsDeviceOptions) =>
      deviceOptions === undefined ? createDevice() : createDevice(deviceOptions),
  };
  const handle = await createDevice();
  const outcomes: CaseOutcome[] = [];
  try {
    for (const c of options.cases ?? CTS_CASES) {
      const modes: readonly RefMode[] = c.recordsCommands ? ['direct', 'slots'] : ['direct'];
      for (const mode of modes) {
        const name = c.recordsCommands ? `${c.id} [${mode}]` : c.id;
        const context = new CtsContext(handle, mode, timeoutMs);
        const t0 = performance.now();
        let error: string | undefined;
        try {
          // A case that hangs despite the suite's timeouts still ends the run: 4× the wait timeout.
          let timer: ReturnType<typeof setTimeout> | undefined;
          const limit = new Promise<never>((_, reject) => {
            timer = setTimeout(
              () => reject(new Error(`case timed out after ${4 * timeoutMs} ms`)),
              4 * timeoutMs,
            );
          });
          try {
            await Promise.race([c.run(context, extra), limit]);
          } finally {
            clearTimeout(timer);
          }
        } catch (caught) {
          error = describeFailure(caught);
        } finally {
          await context.cleanup().catch((caught: unknown) => {
            error ??= `cleanup: ${describeFailure(caught)}`;
          });
        }
        const ms = performance.now() - t0;
        outcomes.push(error === undefined ? { name, ok: true, ms } : { name, ok: false, ms, error });
      }
    }
  } finally {
    await handle.device.destroy();
  }
  return outcomes;
}
