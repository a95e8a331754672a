/**
 * The WGSL conventions of Keel's WebGPU executables, and the one rewrite the device applies.
 *
 * - Binding i of an export is `@group(0) @binding(i)`, a storage buffer (`var<storage, read_write>`;
 *   read-only declarations are accepted) or a uniform buffer (`var<uniform>`).
 * - Constants, when the export takes some, are `@group(1) @binding(0) var<uniform>` of a struct of up to
 *   64 scalar 32-bit members (or an array of vec4), in the order the dispatch passes them.
 *
 * Rewrite: `var<storage, read>` (and `var<storage>`, which means read) becomes
 * `var<storage, read_write>`. WebGPU forbids using one GPUBuffer as read-only storage and as writable
 * storage in one dispatch, and Keel's pooled buffers are ranges of shared GPUBuffers, so every storage
 * binding is bound read-write; the kernel's code is unchanged (it only reads).
 *
 * It also reads each entry point's `@workgroup_size` where its arguments are integer literals or
 * `const`/`override` names declared with one (other expressions are not evaluated), so that the
 * device can check an export's declared `workgroupSize` against the shader's: the workload's default
 * workgroup count is computed from the declared size, so a mismatch would silently skip or repeat work.
 */

/** The rewritten code and the kind of each group-0 binding it declares. */
export interface PreparedWgsl {
  readonly code: string;
  /** binding index → 's' (storage) or 'u' (uniform), for `@group(0)` declarations. */
  readonly group0: ReadonlyMap<number, 's' | 'u'>;
  /** entry point name → its `@workgroup_size` [x, y, z], where it could be read (see above). */
  readonly workgroupSizes: ReadonlyMap<string, readonly [number, number, number]>;
}

const DECLARATION = /((?:@\s*\w+\s*\(\s*\d+\s*\)\s*)+)var\s*<\s*(\w+)\s*(?:,\s*(\w+)\s*)?>/g;
const ATTRIBUTE = /@\s*(\w+)\s*\(\s*(\d+)\s*\)/g;
/** A function's attributes (group 1) and its name (group 2). */
const FUNCTION = /((?:@\s*\w+\s*(?:\([^()]*\))?\s*)+)fn\s+(\w+)/g;
const WORKGROUP_SIZE = /@\s*workgroup_size\s*\(([^()]*)\)/;
/** An integer literal argument: decimal or hex, with an optional `u`/`i` suffix. */
const LITERAL = /^\s*(0[xX][0-9a-fA-F]+|\d+)[ui]?\s*$/;

/** A module-scope `const` or `override` whose initializer is an integer literal: name, value. */
const NAMED = /\b(?:const|override)\s+(\w+)\s*(?::\s*\w+\s*)?=\s*(0[xX][0-9a-fA-F]+|\d+)[ui]?\s*;/g;

/**
 * The `@workgroup_size` of every entry point whose arguments are integer literals or names of
 * `const`/`override` declarations initialised with one (an override's default: Keel passes no
 * pipeline constants); any other expression leaves the entry point unchecked.
 */
function workgroupSizes(clean: string): Map<string, readonly [number, number, number]> {
  const named = new Map<string, string>();
  NAMED.lastIndex = 0;
  for (let m = NAMED.exec(clean); m !== null; m = NAMED.exec(clean)) named.set(m[1] ?? '', m[2] ?? '');
  const sizes = new Map<string, readonly [number, number, number]>();
  FUNCTION.lastIndex = 0;
  for (let m = FUNCTION.exec(clean); m !== null; m = FUNCTION.exec(clean)) {
    const size = WORKGROUP_SIZE.exec(m[1] ?? '');
    if (size === null) continue;
    const args = (size[1] ?? '').split(',').filter((a, i, all) => i < all.length - 1 || a.trim() !== '');
    const values = args.map((a) => LITERAL.exec(a)?.[1] ?? named.get(a.trim()));
    if (values.length === 0 || values.length > 3 || values.some((v) => v === undefined)) continue;
    const [x = 1, y = 1, z = 1] = values.map(Number);
    sizes.set(m[2] ?? '', [x, y, z]);
  }
  return sizes;
}

/** Removes comments (keeping line structure) so declarations inside them are ignored. */
function stripComments(code: string): string {
  return code
    .replace(/\/\*[\s\S]*?\*\//g, (m) => m.replace(/[^\n]/g, ' '))
    .replace(/\/\/[^\n]*/g, (m) => ' '.repeat(m.length));
}

/** Applies the rewrite and finds the group-0 binding kinds. */
export function prepareWgsl(code: string): PreparedWgsl {
  const group0 = new Map<number, 's' | 'u'>();
  const clean = stripComments(code);
  let out = '';
  let last = 0;
  DECLARATION.lastIndex = 0;
  for (let m = DECLARATION.exec(clean); m !== null; m = DECLARATION.exec(clean)) {
    const attributes = m[1] ?? '';
    const space = m[2];
    const access = m[3];
    let group = -1;
    let binding = -1;
    ATTRIBUTE.lastIndex = 0;
    for (let a = ATTRIBUTE.exec(attributes); a !== null; a = ATTRIBUTE.exec(attributes)) {
      if (a[1] === 'group') group = Number(a[2]);
      else if (a[1] === 'binding') binding = Number(a[2]);
    }
    if (group === 0 && binding >= 0 && (space === 'storage' || space === 'uniform')) {
      group0.set(binding, space === 'uniform' ? 'u' : 's');
    }
    if (space === 'storage' && (access === undefined || access === 'read')) {
      const start = m.index + attributes.length;
      out += `${code.slice(last, start)}var<storage, read_write>`;
      last = m.index + m[0].length;
    }
  }
  out += code.slice(last);
  return { code: out, group0, workgroupSizes: workgroupSizes(clean) };
}
