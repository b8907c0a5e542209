// Values and keys as the Realtime Database sees them: key order, types, paths.

const INT_KEY = /^-?(0|[1-9][0-9]{0,9})$/;
const MIN_INT = -2147483648;
const MAX_INT = 2147483647;

/** The 32-bit integer a key stands for (such keys sort first, numerically), or null. */
function intKey(key) {
  if (!INT_KEY.test(key)) return null;
  const n = Number(key);
  return n >= MIN_INT && n <= MAX_INT ? n : null;
}

/** Firebase key order: integer keys numerically, then the other keys as strings. */
export function compareKeys(a, b) {
  if (a === b) return 0;
  const x = intKey(a);
  const y = intKey(b);
  if (x !== null && y !== null) return x - y || (a.length - b.length);
  if (x !== null) return -1;
  if (y !== null) return 1;
  return a < b ? -1 : 1;
}

/** The type name the editors use for a value. */
export function typeOf(value) {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'object') return 'object';
  return typeof value;
}

function typeRank(value) {
  switch (typeOf(value)) {
    case 'null': return 0;
    case 'boolean': return value ? 2 : 1;
    case 'number': return 3;
    case 'string': return 4;
    default: return 5;
  }
}

/** Firebase value order (null, false, true, numbers, strings, objects); ties by key. */
export function compareValues(a, b) {
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 3) return a - b;
  if (ra === 4) return a < b ? -1 : a > b ? 1 : 0;
  return 0;
}

/** Objects for arrays (the REST API writes `{"0": …, "1": …}` as an array), recursively. */
export function normalize(value) {
  if (Array.isArray(value)) {
    const out = {};
    value.forEach((v, i) => { if (v !== null && v !== undefined) out[String(i)] = normalize(v); });
    return Object.keys(out).length ? out : null;
  }
  if (value !== null && typeof value === 'object') {
    const out = {};
    for (const [k, v] of Object.entries(value)) {
      const n = normalize(v);
      if (n !== null && n !== undefined) out[k] = n;
    }
    return Object.keys(out).length ? out : null;
  }
  return value === undefined ? null : value;
}

/** The keys of an object value in Firebase key order. */
export function sortedKeys(value) {
  return value !== null && typeof value === 'object' ? Object.keys(value).sort(compareKeys) : [];
}

/** The child at a relative path (`['a', 'b']`), or null. */
export function childAt(value, path) {
  let v = value;
  for (const key of path) {
    if (v === null || typeof v !== 'object' || !(key in v)) return null;
    v = v[key];
  }
  return v;
}

/** `value` with `data` written at `path` (null deletes; emptied objects vanish). Immutable. */
export function setAt(value, path, data) {
  if (path.length === 0) return normalize(data);
  const base = value !== null && typeof value === 'object' ? { ...value } : {};
  const [head, ...rest] = path;
  const child = setAt(base[head] ?? null, rest, data);
  if (child === null) delete base[head];
  else base[head] = child;
  return Object.keys(base).length ? base : null;
}

/**
 * Appends to `out` the paths (below `at`) where `before` and `after` differ: the deepest ones,
 * at most `limit` in all (past that, `at` itself).
 */
export function diffPaths(before, after, at, out, limit = 100) {
  if (before === after) return;
  const objects = before !== null && typeof before === 'object' && after !== null && typeof after === 'object';
  if (!objects || out.length >= limit) {
    out.push(at);
    return;
  }
  const start = out.length;
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    diffPaths(before[key] ?? null, after[key] ?? null, at.concat(key), out, limit);
    if (out.length > limit) {
      out.length = start;
      out.push(at);
      return;
    }
  }
}

/** Splits `/a/b` (or `a/b`) into keys. */
export function parsePath(text) {
  return String(text).split('/').filter((s) => s.length > 0);
}

/** `/a/b` for `['a', 'b']`, `/` for the root. */
export function pathText(path) {
  return '/' + path.join('/');
}

const BAD_KEY = /[.#$\[\]\/\u0000-\u001f\u007f]/;

/** Why `key` can't name a child, or null when it can. */
export function keyProblem(key) {
  if (!key) return 'A key can\'t be empty.';
  if (BAD_KEY.test(key)) return `The key "${key}" can't contain ".", "#", "$", "[", "]", "/" or control characters.`;
  if (new TextEncoder().encode(key).length > 768) return 'A key can be at most 768 bytes long.';
  return null;
}

/** The value an editor's type and text stand for; throws an Error that says what is wrong. */
export function parseTyped(type, text) {
  switch (type) {
    case 'string': return text;
    case 'number': {
      const n = Number(text.trim());
      if (text.trim() === '' || !Number.isFinite(n)) throw new Error(`"${text}" is not a number.`);
      return n;
    }
    case 'boolean':
      if (text === 'true') return true;
      if (text === 'false') return false;
      throw new Error('A boolean is true or false.');
    case 'null': return null;
    case 'json':
      try {
        return JSON.parse(text);
      } catch (e) {
        throw new Error(`Not valid JSON: ${e.message}`);
      }
    default: throw new Error(`Unknown type ${type}.`);
  }
}

/** The editor text for a value of a type. */
export function editText(value) {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  return typeof value === 'object' ? JSON.stringify(value, null, 2) : String(value);
}

/** How a leaf value reads in the tree (strings quoted, as JSON). */
export function displayValue(value) {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}