/**
 * `defineDeviceConformance`: registers the conformance suite for one device configuration with vitest.
 *
 * One device is created per suite (in `beforeAll`) and destroyed after it; each case gets a fresh
 * CtsContext (its buffers are destroyed after the case). Cases that record commands run twice, with
 * direct refs ('[direct]') and with binding-table slots ('[slots]'). Every wait the suite makes has a
 * timeout, so a non-conforming device fails cases instead of hanging the run.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { CtsTag } from './case';
import { CTS_CASES } from './cases/all';
import {
  type CreateCtsDevice,
  CtsContext,
  type CtsDeviceHandle,
  type CtsDeviceOptions,
  type RefMode,
} from './context';

export interface ConformanceOptions {
  /** Run only cases with at least one of these tags (default: every case). */
  readonly tags?: readonly CtsTag[];
  /**
   * Cases the device does not support, by id ('alloca.cross-queue') or id and mode
   * ('alloca.chained [slots]'), with the reason. They are skipped; the reason is in the title.
   */
  readonly unsupported?: Readonly<Record<string, string>>;
  /** Cases known to fail, by id or id and mode, with the reason: they run with `it.fails`. */
  readonly expectedFailures?: Readonly<Record<string, string>>;
  /** Timeout of each wait the suite makes, in ms (default 5000); vitest's per-case timeout is 4× it. */
  readonly timeoutMs?: number;
}

function lookup(
  table: Readonly<Record<string, string>> | undefined,
  id: string,
  mode: string,
): string | undefined {
  if (table === undefined) return undefined;
  return table[`${id} [${mode}]`] ?? table[id];
}

/**
 * Registers `describe(name)` with one `it` per case and ref mode. `createDevice` is called once for the
 * suite, and again by cases that need a second device (foreign buffers, lifecycle) — those devices are
 * destroyed by the case.
 */
export function defineDeviceConformance(
  name: string,
  createDevice: CreateCtsDevice,
  options: ConformanceOptions = {},
): void {
  const timeoutMs = options.timeoutMs ?? 5000;
  const known = new Set(CTS_CASES.map((c) => c.id));
  for (const table of [options.unsupported, options.expectedFailures]) {
    for (const key of Object.keys(table ?? {})) {
      const id = key.replace(/ \[(direct|slots)\]$/, '');
      if (!known.has(id)) throw new Error(`defineDeviceConformance(${name}): unknown case '${key}'`);
    }
  }
  const tags = options.tags;
  const cases =
    tags === undefined ? CTS_CASES : CTS_CASES.filter((c) => c.tags.some((t) => tags.includes(t)));
  const extra = {
    createDevice: async (deviceOptions?: CtsDeviceOptions): Promise<CtsDeviceHandle> =>
      deviceOptions === undefined ? createDevice() : createDevice(deviceOptions),
  };

  describe(name, () => {
    let handle: CtsDeviceHandle | undefined;
    beforeAll(async () => {
      handle = await createDevice();
    });
    afterAll(async () => {
      await handle?.device.destroy();
      handle = undefined;
    });

    for (const c of cases) {
      const modes: readonly RefMode[] = c.recordsCommands ? ['direct', 'slots'] : ['direct'];
      for (const mode of modes) {
        const title = c.recordsCommands ? `${c.id} [${mode}]: ${c.title}` : `${c.id}: ${c.title}`;
        const unsupported = lookup(options.unsupported, c.id, mode);
        if (unsupported !== undefined) {
          it.skip(`${title} (unsupported: ${unsupported})`, () => {});
          continue;
        }
        const expected = lookup(options.expectedFailures, c.id, mode);
        const body = async (): Promise<void> => {
          if (handle === undefined) throw new Error(`${name}: the device was not created`);
          const context = new CtsContext(handle, mode, timeoutMs);
          try {
            await c.run(context, extra);
          } finally {
            await context.cleanup();
          }
        };
        if (expected !== undefined) it.fails(`${title} (expected failure: ${expected})`, body, timeoutMs * 4);
        else it(title, body, timeoutMs * 4);
      }
    }
  });
}
