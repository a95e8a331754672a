/**
 * Conformance cases: an id, a title, tags, and whether the case records commands (then the suite runs
 * it twice: with direct refs and with binding-table slots).
 */
import type { CtsContext, CtsDeviceHandle, CtsDeviceOptions } from './context';

/** Groups of cases; `defineDeviceConformance`'s `tags` option runs only the listed groups. */
export type CtsTag =
  | 'semaphore'
  | 'alloca'
  | 'transfer'
  | 'dispatch'
  | 'reuse'
  | 'host-call'
  | 'stress'
  | 'validation'
  | 'multi-queue'
  | 'lifecycle'
  | 'trace';

export interface CtsCase {
  /** Stable id, e.g. 'alloca.chained'; `unsupported` / `expectedFailures` keys use it. */
  readonly id: string;
  readonly title: string;
  readonly tags: readonly CtsTag[];
  /** Runs once per RefMode ('direct', 'slots') when true; once (mode 'direct') otherwise. */
  readonly recordsCommands: boolean;
  /** A case that makes and destroys its own devices needs `createDevice` (see CtsContext.handle). */
  run(context: CtsContext, extra: CaseExtras): Promise<void>;
}

/** What some cases need beyond the shared device. */
export interface CaseExtras {
  /**
   * Creates another device of the same package (for foreign-buffer and lifecycle cases, and cases
   * that need device options); the case destroys it.
   */
  readonly createDevice: (options?: CtsDeviceOptions) => Promise<CtsDeviceHandle>;
}

export function defineCase(c: CtsCase): CtsCase {
  return c;
}
