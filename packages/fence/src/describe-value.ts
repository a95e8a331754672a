/**
 * How every Keel error message shows a caller's value. One rendering for the whole runtime, so that a
 * message never says `[object Object]`, `[object Promise]`, shows the string '64' as the number 64, or
 * a 2**33 mask as `0x0`. Pure, allocation only on the error path, never throws (not even on a revoked
 * Proxy or an object whose getters throw).
 */

// A const enum: the build writes the value in place (a top-level const stays a variable).
enum Limit {
  MAX_STRING = 40,
}

/**
 * A short, unambiguous rendering of an arbitrary value:
 * - strings are quoted (`"64"`), long ones cut with `…`;
 * - numbers as JavaScript writes them (`-5`, `NaN`, `4294967296`), bigints with `n`;
 * - `undefined`, `null`, booleans as themselves;
 * - functions as `a function 'name'`; promises as `a Promise`; arrays as `an array of N`;
 *   typed arrays as `a Float32Array of N elements`, `an ArrayBuffer of N bytes`;
 * - other objects as `an object` or `an instance of Name`, and `{ buffer, offset, … }` style objects
 *   list their keys: `an object { buffer, offset }`.
 */
export function describeValue(value: unknown): string {
  try {
    return describeUnsafe(value);
  } catch {
    return 'an unreadable value';
  }
}

function describeUnsafe(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value.length > Limit.MAX_STRING ? `${value.slice(0, Limit.MAX_STRING)}…` : value);
    case 'bigint':
      return `${value}n`;
    case 'symbol':
      return `a symbol ${String(value.description ?? '')}`.trimEnd();
    case 'function':
      return value.name === '' ? 'a function' : `a function '${value.name}'`;
    case 'object':
      if (value !== null) return describeObject(value);
  }
  // numbers as JavaScript writes them (but -0 as -0), booleans, undefined, null
  return Object.is(value, -0) ? '-0' : String(value);
}

function describeObject(object: object): string {
  if (typeof (object as { then?: unknown }).then === 'function') return 'a Promise';
  if (Array.isArray(object)) return `an array of ${object.length}`;
  const bytes =
    object instanceof ArrayBuffer
      ? 'ArrayBuffer'
      : object instanceof DataView
        ? 'DataView'
        : typeof SharedArrayBuffer !== 'undefined' && object instanceof SharedArrayBuffer
          ? 'SharedArrayBuffer'
          : undefined;
  if (bytes) return `${article(bytes)} ${bytes} of ${(object as ArrayBuffer).byteLength} bytes`;
  const name = (object as { constructor?: { name?: unknown } }).constructor?.name;
  if (ArrayBuffer.isView(object)) {
    const type = typeof name === 'string' ? name : 'ArrayBufferView';
    return `${article(type)} ${type} of ${(object as unknown as { length: number }).length} elements`;
  }
  const proto: unknown = Object.getPrototypeOf(object);
  if (
    proto !== null &&
    proto !== Object.prototype &&
    typeof name === 'string' &&
    name !== '' &&
    name !== 'Object'
  ) {
    const label = (object as { label?: unknown }).label;
    return `${article(name)} ${name}${typeof label === 'string' && label !== '' ? ` '${label}'` : ''}`;
  }
  const keys = Object.keys(object);
  if (keys.length === 0) return 'an empty object';
  return `an object { ${keys.slice(0, 6).join(', ')}${keys.length > 6 ? ', …' : ''} }`;
}

function article(name: string): string {
  return /^[AEIOU]/.test(name) ? 'an' : 'a';
}
