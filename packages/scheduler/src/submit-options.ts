/**
 * Checking `SubmitOptions` (Scheduler.submit, copyAcrossDevices), as constructor options are checked:
 * options that are not a plain object (a number, null, an array) and unknown keys (a misspelt
 * `signalfence`, whose fence would never be signalled) are INVALID_ARGUMENT naming the call and the
 * key, with hal's `checkOptions` wording. Known keys keep their own checks (a mask, a Fence) where they
 * are used. On the hot path (known keys only) this allocates nothing: a `for … in` over the keys, and
 * `checkOptions` runs only to word the error.
 */
import { checkOptions, type OptionRules, QueueAffinity } from '@keel/hal';
import { isFence } from '@keel/hal/driver';

/** The keys SubmitOptions has (see queue-operation.ts). */
const SUBMIT_OPTION_RULES: OptionRules = {
  affinity: { type: 'custom', expected: 'a 32-bit integer queue mask', check: QueueAffinity.isValid },
  wait: { type: 'custom', expected: 'a Fence', check: isFence },
  signalFence: { type: 'custom', expected: 'a Fence', check: isFence },
  signal: { type: 'custom', expected: 'a Fence', check: isFence },
};

/** INVALID_ARGUMENT (naming `what`) unless `options` is undefined or an object of known keys only. */
export function checkSubmitOptions(options: unknown, what: string): void {
  if (options === undefined) return;
  if (typeof options === 'object' && options !== null && !Array.isArray(options)) {
    let known = true;
    for (const key in options) {
      if (!Object.hasOwn(SUBMIT_OPTION_RULES, key) && Object.hasOwn(options, key)) {
        known = false;
        break;
      }
    }
    if (known) return;
  }
  checkOptions(what, options, SUBMIT_OPTION_RULES);
}
