/** Every case of the conformance suite, in the order they run (no test runner here: see run-cases.ts). */
import type { CtsCase } from '../case';
import { allocaCases } from './alloca';
import { dispatchCases } from './dispatch';
import { hostCallCases, stressCases } from './host-stress';
import { reuseCases } from './reuse';
import { semaphoreCases } from './semaphores';
import { traceCases } from './trace';
import { transferCases } from './transfers';
import { unhandledFailureCases } from './unhandled-failure';
import { validationCases } from './validation';

export const CTS_CASES: readonly CtsCase[] = Object.freeze([
  ...semaphoreCases,
  ...allocaCases,
  ...transferCases,
  ...dispatchCases,
  ...reuseCases,
  ...hostCallCases,
  ...unhandledFailureCases,
  ...stressCases,
  ...validationCases,
  ...traceCases,
]);
