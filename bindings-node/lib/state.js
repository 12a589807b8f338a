'use strict';
// The result object of a run: the state's JSON data, whose growing parts (`run.messages`,
// `steps`, `stepResults`, `items`) are parsed when first read, with its `toJSON` (exact
// BigInts) and the non-enumerable `messages`. At the bottom, above values.js only: every
// layer that hands a state to the caller (an error's `result`, a stream, a stored run)
// shapes it here.

const { MAX_STATE_DEPTH, holdsBigInt, mayHoldBigInt, parseExact, writeExact } = require('../values.js');

const INSPECT = Symbol.for('nodejs.util.inspect.custom');
const BIG = Symbol('phaseo.stateHoldsBigInt');
const PART_MESSAGES = 0;
const PART_STEPS = 1;
const PART_STEP_RESULTS = 2;
const PART_ITEMS = 3;

function setData(target, key, value) {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}

/** Makes `target[key]` an enumerable property that parses `handle.part(part)` when first
 * read (or takes the value assigned to it) and then becomes a plain data property. */
function lazyPart(target, key, handle, part, meta) {
  let value;
  let ready = false;
  Object.defineProperty(target, key, {
    enumerable: true,
    configurable: true,
    get() {
      if (!ready) {
        const text = handle.part(part);
        value = mayHoldBigInt(text) ? parseExact(text, meta) : JSON.parse(text);
        ready = true;
        try { setData(target, key, value); } catch { /* frozen: keep answering from here */ }
      }
      return value;
    },
    set(v) {
      value = v;
      ready = true;
      setData(target, key, v);
    },
  });
}

/** `util.inspect` (console.log) shows the data, not getters: read every property first. */
function inspectData() {
  for (const key of Object.keys(this)) void this[key];
  return this;
}

/** `JSON.stringify(result)`: the state itself; when it holds BigInts (which
 * `JSON.stringify` cannot write), their exact digits through `JSON.rawJSON` where Node has
 * it, else the state's exact JSON text as a JSON string (`continueRun` and `parseState`
 * take that string as well). */
function stateToJSON() {
  const meta = this[BIG];
  if (meta !== undefined) {
    // What the SDK put in the state says whether it holds BigInts (a BigInt the
    // application adds later gets the usual TypeError). The lazy parts are read now:
    // JSON.stringify reads them next anyway.
    void this.steps; void this.stepResults; void this.items;
    if (this.run !== null && typeof this.run === 'object') void this.run.messages;
    if (!meta.big) return this;
  } else if (!holdsBigInt(this)) {
    return this;
  }
  if (typeof JSON.rawJSON === 'function') return withRawIntegers(this);
  return writeExact({ ...this }, MAX_STATE_DEPTH);
}

/** A state object parsed at once (stream and error results), with `stateToJSON`. */
function withStateJSON(state) {
  if (state !== null && typeof state === 'object') {
    Object.defineProperty(state, 'toJSON', { value: stateToJSON, writable: true, configurable: true });
  }
  return withMessages(state);
}

/** `result.messages`, the product's spelling of `result.run.messages`: not enumerable, so
 * not part of the canonical state (`JSON.stringify`, spreading, `structuredClone`). */
function withMessages(state) {
  if (state !== null && typeof state === 'object' && !Object.prototype.hasOwnProperty.call(state, 'messages')) {
    Object.defineProperty(state, 'messages', {
      get() { return this.run !== null && typeof this.run === 'object' ? this.run.messages : undefined; },
      configurable: true,
    });
  }
  return state;
}

function withRawIntegers(value) {
  if (typeof value === 'bigint') return JSON.rawJSON(value.toString());
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(withRawIntegers);
  const copy = {};
  for (const key of Object.keys(value)) copy[key] = withRawIntegers(value[key]);
  return copy;
}

/** The result of a run from its native state: the state's JSON data, except that
 * `run.messages`, `steps`, `stepResults` and `items` (which grow with the run) are parsed
 * when first read. `JSON.stringify(result)`, property access, enumeration and
 * `structuredClone` see exactly the canonical state. */
function stateOf(handle) {
  const head = handle.head();
  // Whether the state holds integers beyond 2^53 (see `stateToJSON`).
  const meta = { big: false };
  const state = mayHoldBigInt(head) ? parseExact(head, meta) : JSON.parse(head);
  const run = state.run;
  lazyPart(run, 'messages', handle, PART_MESSAGES, meta);
  lazyPart(state, 'steps', handle, PART_STEPS, meta);
  lazyPart(state, 'stepResults', handle, PART_STEP_RESULTS, meta);
  lazyPart(state, 'items', handle, PART_ITEMS, meta);
  Object.defineProperty(state, BIG, { value: meta });
  Object.defineProperty(run, INSPECT, { value: inspectData, writable: true, configurable: true });
  Object.defineProperty(state, INSPECT, { value: inspectData, writable: true, configurable: true });
  Object.defineProperty(state, 'toJSON', { value: stateToJSON, writable: true, configurable: true });
  return withMessages(state);
}

module.exports = {
  stateOf,
  withMessages,
  withStateJSON,
};
