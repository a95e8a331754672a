/**
 * Validation of options objects at creation time, shared by every factory (devices, pools, command
 * buffers, managers). Contract: an options argument that is not a plain object (a string such as
 * `'sync'`, an array, a class instance where a bag is expected), an unknown key, a value of the wrong
 * type or out of range throws KeelError INVALID_ARGUMENT whose message names the factory, the option
 * and the rule, and shows the value with `describeValue` (`createCpuDevice: option 'workers' must be an
 * integer in [1, 64], got "4"`). `undefined` values count as omitted, as with `exactOptionalPropertyTypes`
 * off. Runs once per creation, never on a hot path.
 */
import { describeValue } from '@keel/fence';
import { invalid } from './driver/invalid';

/** The rule one option must follow. */
export type OptionRule =
  | { readonly type: 'integer'; readonly min?: number; readonly max?: number }
  | {
      readonly type: 'number';
      readonly min?: number;
      readonly max?: number;
      readonly allowInfinity?: boolean;
    }
  | { readonly type: 'boolean' }
  | { readonly type: 'string'; readonly oneOf?: readonly string[] }
  | { readonly type: 'function' }
  | { readonly type: 'object' }
  | {
      readonly type: 'custom';
      /** What the value must be, for the message ("a GPUDevice"). */
      readonly expected: string;
      readonly check: (value: unknown) => boolean;
    };

/** Rules by option name; keys not listed are refused as unknown. */
export type OptionRules = Readonly<Record<string, OptionRule>>;

/**
 * Checks `options` (undefined means `{}`) against `rules`. `what` names the factory ("createCpuDevice").
 * Throws INVALID_ARGUMENT on the first broken rule; returns the options object typed as `T`.
 */
export function checkOptions<T extends object>(what: string, options: unknown, rules: OptionRules): T {
  if (options === undefined) return {} as T;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw invalid(`${what}: options must be an object, got ${describeValue(options)}`);
  }
  for (const key of Object.keys(options)) {
    const rule = rules[key];
    if (!rule) {
      const known = Object.keys(rules).join(', ');
      throw invalid(`${what}: unknown option '${key}' (known options: ${known === '' ? 'none' : known})`);
    }
    const value = (options as Record<string, unknown>)[key];
    if (value === undefined) continue;
    const broken = checkRule(rule, value);
    if (broken !== undefined) {
      throw invalid(`${what}: option '${key}' must be ${broken}, got ${describeValue(value)}`);
    }
  }
  return options as T;
}

/** The rule's wording when `value` breaks it, else undefined. */
function checkRule(rule: OptionRule, value: unknown): string | undefined {
  switch (rule.type) {
    case 'integer':
    case 'number': {
      const integer = rule.type === 'integer';
      const infinity = !integer && rule.allowInfinity === true;
      const ok =
        typeof value === 'number' &&
        (integer
          ? Number.isSafeInteger(value)
          : Number.isFinite(value) || (infinity && value === Infinity)) &&
        (rule.min === undefined || value >= rule.min) &&
        (rule.max === undefined || value <= rule.max);
      return ok
        ? undefined
        : `${integer ? 'an integer' : 'a number'}${rangeText(rule.min, rule.max)}${infinity ? ' or Infinity' : ''}`;
    }
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'a boolean';
    case 'string':
      if (typeof value !== 'string') return rule.oneOf === undefined ? 'a string' : oneOfText(rule.oneOf);
      return rule.oneOf === undefined || rule.oneOf.includes(value) ? undefined : oneOfText(rule.oneOf);
    case 'function':
      return typeof value === 'function' ? undefined : 'a function';
    case 'object':
      return typeof value === 'object' && value !== null ? undefined : 'an object';
    case 'custom':
      return rule.check(value) ? undefined : rule.expected;
  }
}

function rangeText(min: number | undefined, max: number | undefined): string {
  if (min !== undefined && max !== undefined) return ` in [${min}, ${max}]`;
  if (min !== undefined) return ` ≥ ${min}`;
  if (max !== undefined) return ` ≤ ${max}`;
  return '';
}

function oneOfText(values: readonly string[]): string {
  return `one of ${values.map((v) => `'${v}'`).join(', ')}`;
}
