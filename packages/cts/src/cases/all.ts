/** Every case of the conformance suite, in the order they run (no test runner here: see run-cases.ts). */
import type { CtsCase } from '../case';
import { allocaCases } from './alloca';
import { dispatchCases } from './dispatch';
import { failurePropagationCases } from './failure-propagation';
import { hostCallCases, stressCases } from './host-stress';
import { reuseCases } from './reuse';
import { semaphoreCases } from './semaphores';
import { submissionCases } from './submissions';
import { timepointCases } from './timepoints';
import { traceCases } from './trace';
import { transferEdgeCases } from './transfer-edges';
import { transferCases } from './transfers';
import { unhandledFailureCases } from './unhandled-failure';
import { validationCases } from './validation';

export const CTS_CASES: readonly CtsCase[] = Object.freeze([
  ...semaphoreCases,
  ...timepointCases,
  ...failurePropagationCases,
  ...allocaCases,
  ...transferCases,
  ...transferEdgeCases,
  ...dispatchCases,
  ...reuseCases,
  ...submissionCases,
  ...hostCallCases,
  ...unhandledFailureCases,
  ...stressCases,
  ...validationCases,
  ...traceCases,
]);
