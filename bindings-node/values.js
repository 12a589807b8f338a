'use strict';
// Values crossing between JavaScript and the core, as JSON text (docs/behaviour.md §7): what JS writes
// is nested at most 64 levels deep (the core checks the depth where it parses), has no
// cycle, and its integers fit 64 bits (`BigInt` is written as an integer); what JS reads
// has integers beyond ±(2^53 − 1) as `BigInt`. Nothing here lets a host value throw
// anything but a `ValueError` with a clear message.

/** How deep a value may be nested (a scalar is depth 0, `{"a": 1}` depth 1). */
const MAX_DEPTH = 64;
/** How deep a whole state may be nested: the state's own structure holds user values
 * (a paused call's input is 6 levels down), so its reader allows 8 levels more, and a
 * paused agent tool's state stands 4 levels down in the state that holds it, agents
 * nesting at most 8 deep (the core's `MAX_STATE_DEPTH`, `docs/behaviour.md` §7). The
 * core then checks each state from its own root. */
const MAX_STATE_DEPTH = MAX_DEPTH + 8 + 4 * 8;
/** The core's words for a value or state nested too deep, as every language says them. */
const DEPTH_MESSAGE = `value is nested more than ${MAX_DEPTH} levels deep`;
const CYCLE_MESSAGE = 'value contains a cycle';
// Each item takes at least two characters of JSON text, and V8's strings end at 2^29.
const MAX_ARRAY_LENGTH = 2 ** 28;
const MIN_I64 = -(2n ** 63n);
const MAX_U64 = 2n ** 64n - 1n;

/** The text of a thrown value that has none (`String(value)` threw or gave no string). */
const UNPRINTABLE = 'a value that cannot be converted to text was thrown';

/** A value that cannot cross: `kind` is `depth`, `cycle`, `integer` or `unreadable`. */
class ValueError extends Error {
  constructor(message, kind) {
    super(message);
    this.kind = kind;
  }
}

/** Best-effort text of any thrown or rejected value; never throws. */
function errorMessage(error) {
  try {
    if (error instanceof Error) {
      const message = error.message;
      if (typeof message === 'string' && message) return wellFormed(message);
      const name = error.name;
      if (typeof name === 'string' && name) return wellFormed(name);
    }
  } catch { /* a throwing getter or Proxy trap: try String() */ }
  try {
    const text = String(error);
    if (typeof text === 'string') return wellFormed(text);
  } catch { /* no text at all */ }
  return UNPRINTABLE;
}

// Lone surrogates have no UTF-8 form: they become U+FFFD (as in any string given to Rust).
function wellFormed(text) {
  return typeof text.toWellFormed === 'function' ? text.toWellFormed() : text;
}

function bigintText(value) {
  if (value < MIN_I64 || value > MAX_U64) throw new ValueError(`integer ${value} does not fit in 64 bits`, 'integer');
  return value.toString();
}

/** The JSON text of `value`, as `JSON.stringify` writes it plus `BigInt`s; throws a
 * `ValueError` for a cycle, a `BigInt` beyond 64 bits, a value nested deeper than
 * `maxDepth` (a value's limit unless told otherwise), or one that cannot be read (a
 * throwing getter, Proxy trap or `toJSON`). */
function writeExact(root, maxDepth = MAX_DEPTH) {
  const ancestors = [];
  const write = (holder, key, value, depth) => {
    try {
      if (value !== null && (typeof value === 'object' || typeof value === 'bigint')) {
        const toJSON = value.toJSON;
        if (typeof toJSON === 'function') value = toJSON.call(value, key);
      }
    } catch (error) {
      throw unreadable(error);
    }
    switch (typeof value) {
      case 'string': return JSON.stringify(value);
      case 'number': return Number.isFinite(value) ? String(value) : 'null';
      case 'boolean': return value ? 'true' : 'false';
      case 'bigint': return bigintText(value);
      case 'object': break;
      default: return undefined; // undefined, functions, symbols
    }
    if (value === null) return 'null';
    if (value instanceof Number) return write(holder, key, Number(value), depth);
    if (value instanceof String) return JSON.stringify(String(value));
    if (value instanceof Boolean) return value.valueOf() ? 'true' : 'false';
    if (value instanceof BigInt) return bigintText(value.valueOf());
    if (depth >= maxDepth) throw new ValueError(DEPTH_MESSAGE, 'depth');
    if (ancestors.includes(value)) throw new ValueError(CYCLE_MESSAGE, 'cycle');
    ancestors.push(value);
    let text;
    try {
      if (Array.isArray(value)) {
        const parts = [];
        const length = value.length;
        // Longer than any JSON text V8 can hold: refuse rather than loop for minutes.
        if (!(length <= MAX_ARRAY_LENGTH)) throw new ValueError(`value cannot be read: an array of ${length} items is too large`, 'unreadable');
        for (let i = 0; i < length; i++) parts.push(write(value, String(i), value[i], depth + 1) ?? 'null');
        text = `[${parts.join(',')}]`;
      } else {
        const parts = [];
        for (const k of Object.keys(value)) {
          const item = write(value, k, value[k], depth + 1);
          if (item !== undefined) parts.push(`${JSON.stringify(k)}:${item}`);
        }
        text = `{${parts.join(',')}}`;
      }
    } catch (error) {
      throw error instanceof ValueError ? error : unreadable(error);
    }
    ancestors.pop();
    return text;
  };
  try {
    return write({ '': root }, '', root, 0) ?? 'null';
  } catch (error) {
    // A stack overflow inside a getter or toJSON: still a clear error.
    throw error instanceof ValueError ? error : unreadable(error);
  }
}

function unreadable(error) {
  if (error instanceof ValueError) return error;
  return new ValueError(`value cannot be read: ${errorMessage(error)}`, 'unreadable');
}

/** The JSON text of a value going to the core: `JSON.stringify` when it can (the common
 * path), else the careful writer (BigInt, cycles, odd objects). Throws a `ValueError`.
 * The depth limit is checked by the core, which parses the text anyway. */
function toJson(value) {
  let text;
  try {
    text = JSON.stringify(value);
  } catch {
    return writeExact(value);
  }
  return text === undefined ? 'null' : text;
}

// Integers beyond 2^53 have at least 16 digits: text without such a run of digits parses
// exactly with JSON.parse (the common path).
const LONG_DIGITS = /\d{16}/;

/** Parses JSON text from the core: integers beyond ±(2^53 − 1) (and within 64 bits)
 * become `BigInt`. */
function parseJson(text) {
  return LONG_DIGITS.test(text) ? parseExact(text) : JSON.parse(text);
}

/** Whether JSON text may hold an integer beyond 2^53 (then `parseJson` reads it exactly). */
function mayHoldBigInt(text) {
  return LONG_DIGITS.test(text);
}

const NUMBER = /-?\d+(\.\d+)?([eE][+-]?\d+)?/y;
const WHITESPACE = /[ \t\n\r]*/y;

/** A JSON reader that keeps integers exact (Node 20's `JSON.parse` has no access to a
 * number's source text). Strings go through `JSON.parse` (escapes). `meta.big` is set
 * when a BigInt was made. */
function parseExact(text, meta) {
  let at = 0;
  const skip = () => {
    WHITESPACE.lastIndex = at;
    WHITESPACE.test(text);
    at = WHITESPACE.lastIndex;
  };
  const fail = () => { throw new SyntaxError(`Unexpected JSON at position ${at}`); };
  const string = () => {
    let end = at + 1;
    for (;;) {
      const c = text.charCodeAt(end);
      if (Number.isNaN(c)) fail();
      if (c === 0x5c) end += 2;
      else if (c === 0x22) break;
      else end += 1;
    }
    const value = JSON.parse(text.slice(at, end + 1));
    at = end + 1;
    return value;
  };
  const value = () => {
    skip();
    const c = text[at];
    if (c === '{') {
      at += 1;
      const object = {};
      skip();
      if (text[at] === '}') { at += 1; return object; }
      for (;;) {
        skip();
        if (text[at] !== '"') fail();
        const key = string();
        skip();
        if (text[at] !== ':') fail();
        at += 1;
        const item = value();
        if (key === '__proto__') Object.defineProperty(object, key, { value: item, writable: true, enumerable: true, configurable: true });
        else object[key] = item;
        skip();
        if (text[at] === ',') { at += 1; continue; }
        if (text[at] === '}') { at += 1; return object; }
        fail();
      }
    }
    if (c === '[') {
      at += 1;
      const array = [];
      skip();
      if (text[at] === ']') { at += 1; return array; }
      for (;;) {
        array.push(value());
        skip();
        if (text[at] === ',') { at += 1; continue; }
        if (text[at] === ']') { at += 1; return array; }
        fail();
      }
    }
    if (c === '"') return string();
    if (text.startsWith('true', at)) { at += 4; return true; }
    if (text.startsWith('false', at)) { at += 5; return false; }
    if (text.startsWith('null', at)) { at += 4; return null; }
    NUMBER.lastIndex = at;
    const match = NUMBER.exec(text);
    if (!match) fail();
    at = NUMBER.lastIndex;
    const token = match[0];
    const number = Number(token);
    if (match[1] === undefined && match[2] === undefined && !Number.isSafeInteger(number)) {
      const big = BigInt(token);
      // Beyond 64 bits it was a float written without a fraction: keep the float.
      if (big >= MIN_I64 && big <= MAX_U64) {
        if (meta !== undefined) meta.big = true;
        return big;
      }
    }
    return number;
  };
  const result = value();
  skip();
  if (at !== text.length) fail();
  return result;
}

/** Whether a value holds a `BigInt` anywhere (`JSON.stringify` cannot write it). Stops
 * looking below 200 levels: a value that deep (or cyclic) is not JSON anyway, and
 * `JSON.stringify` says so itself. */
function holdsBigInt(value, depth = 0) {
  if (typeof value === 'bigint') return true;
  if (value === null || typeof value !== 'object' || depth > 200) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      if (typeof item === 'bigint' || (typeof item === 'object' && item !== null && holdsBigInt(item, depth + 1))) return true;
    }
    return false;
  }
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    const item = value[key];
    if (typeof item === 'bigint' || (typeof item === 'object' && item !== null && holdsBigInt(item, depth + 1))) return true;
  }
  return false;
}

/** A definition or options object for the native layer: the object itself, or, when it
 * holds a `BigInt` (which the native object conversion cannot carry), `{$phaseoJsonText:
 * <its JSON text, digits kept>}`, which the native layer reads as that object. */
function nativeSpec(spec) {
  return holdsBigInt(spec) ? { $phaseoJsonText: writeExact(spec) } : spec;
}

module.exports = {
  MAX_DEPTH,
  MAX_STATE_DEPTH,
  UNPRINTABLE,
  ValueError,
  errorMessage,
  holdsBigInt,
  mayHoldBigInt,
  nativeSpec,
  parseExact,
  parseJson,
  toJson,
  writeExact,
};
