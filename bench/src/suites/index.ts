import type { Suite } from '../harness.ts';
import { commandBufferSuite } from './command-buffer.ts';

/** Every suite `pnpm bench` knows, in the order `pnpm bench` (no suite) runs them. */
export const suites: readonly Suite[] = [commandBufferSuite];
