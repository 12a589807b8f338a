'use strict';
// Run stores (docs/behaviour.md §10): the native stores (SQLite, PostgreSQL, memory), the
// application's `{load, save}` state accessor, what a run stores to and a continue
// continues (a state, or a stored run), and the reading of a caller's state
// (`parseState`).

const native = require('../native.js');
const { MAX_STATE_DEPTH, ValueError, errorMessage, parseJson, writeExact } = require('../values.js');
const { withMessages, withStateJSON } = require('./state.js');
const { AgentStateError, decodeError, nativeCall } = require('./errors.js');
const { register } = require('./bridge.js');

function stateError(message) {
  return new AgentStateError(`Invalid state: ${message}`, { code: 'state_invalid' });
}

/** State text from a result, its JSON text, or that text as a JSON string (what
 * `JSON.stringify(result)` gives for a state holding BigInts on a Node without
 * `JSON.rawJSON`). An object that cannot be written is `state_invalid`. */
function stateText(options) {
  const state = options.state ?? options.run;
  if (state === undefined || state === null) throw new TypeError('continueRun needs `run` or `state` (a result or its JSON text)');
  if (typeof state === 'string') return unquoteState(state);
  try {
    // A shallow copy: the data without a result's own `toJSON`. Depth counts from the
    // state's root, so the state limit applies (a paused call's 60-deep input is fine).
    return writeExact(typeof state === 'object' ? { ...state } : state, MAX_STATE_DEPTH);
  } catch (error) {
    throw stateError(error instanceof ValueError ? error.message : `value cannot be read: ${errorMessage(error)}`);
  }
}

function unquoteState(text) {
  if (!text.startsWith('"')) return text;
  try {
    const inner = JSON.parse(text);
    return typeof inner === 'string' ? inner : text;
  } catch {
    return text;
  }
}

const STORE = Symbol('phaseo.runStore');

/** A stored run from its JSON text: the row's columns, its state (a result object) and
 * `pending`, the calls a waiting run waits on (what an approval inbox shows). */
function storedRun(row) {
  row.state = withStateJSON(row.state);
  Object.defineProperty(row, 'pending', {
    get() {
      const pause = this.state && this.state.run ? this.state.run.pause : null;
      return pause && Array.isArray(pause.pendingToolCalls) ? pause.pendingToolCalls : [];
    },
    enumerable: false,
    configurable: true,
  });
  return row;
}

function statusList(status) {
  if (status === undefined || status === null) return undefined;
  if (typeof status === 'string') return [status];
  if (Array.isArray(status) && status.every((s) => typeof s === 'string')) return status;
  throw new TypeError('status must be a status string or an array of them');
}

function cutoffMs(olderThan) {
  if (olderThan instanceof Date) return olderThan.getTime();
  if (typeof olderThan === 'number' && Number.isFinite(olderThan)) return Date.now() - olderThan;
  throw new TypeError('olderThan must be a Date (a cut-off) or a number of milliseconds (an age)');
}

/** A run store. Pass it as the agent option `store` or per run; list the approval inbox
 * with `list({status: 'waiting_for_human'})`. */
class RunStore {
  constructor(nativeStore, kind) {
    Object.defineProperty(this, STORE, { value: nativeStore });
    this.kind = kind;
  }

  /** One page of runs (oldest update first) of the given status(es) and agent; every run
   * when no filter is given. `limit` defaults to 100; pass `nextCursor` as `cursor`. */
  async list(options = {}) {
    const { status, agentId, limit, cursor } = options;
    try {
      const page = parseJson(await this[STORE].list(statusList(status), agentId ?? undefined, limit ?? undefined, cursor ?? undefined));
      page.runs = page.runs.map(storedRun);
      return page;
    } catch (error) {
      throw decodeError(error);
    }
  }

  /** The stored run `runId`, or null. */
  async load(runId) {
    try {
      const text = await this[STORE].load(runId);
      return text === null || text === undefined ? null : storedRun(parseJson(text));
    } catch (error) {
      throw decodeError(error);
    }
  }

  /** Deletes a run; whether it was stored. */
  async delete(runId) {
    try {
      return await this[STORE].delete(runId);
    } catch (error) {
      throw decodeError(error);
    }
  }

  /** Deletes the runs of `statuses` last updated before `olderThan` (a Date, or an age in
   * milliseconds); returns how many. */
  async prune(statuses, { olderThan } = {}) {
    const list = statusList(statuses) ?? [];
    try {
      return await this[STORE].prune(list, cutoffMs(olderThan));
    } catch (error) {
      throw decodeError(error);
    }
  }
}

/** Runs kept in the SQLite file at `path` (created and migrated when needed). */
function createSqliteRunStore(path) {
  if (typeof path !== 'string' || path === '') throw new TypeError('createSqliteRunStore needs a file path');
  return new RunStore(nativeCall(() => native.NativeRunStore.sqlite(path)), 'sqlite');
}

/** Runs kept in PostgreSQL at `url`: connects and migrates, then resolves with the store. */
async function createPostgresRunStore(url) {
  if (typeof url !== 'string' || url === '') throw new TypeError('createPostgresRunStore needs a connection URL');
  try {
    return new RunStore(await native.connectPostgresRunStore(url), 'postgres');
  } catch (error) {
    throw decodeError(error);
  }
}

/** Runs kept in this process's memory (tests). */
function createInMemoryRunStore() {
  return new RunStore(native.NativeRunStore.memory(), 'memory');
}

/** Whether `value` is the application's state accessor (the product's `state` option):
 * an object with `load` and `save` functions, not a state itself. */
function isAccessor(value) {
  return value !== null && typeof value === 'object' && !(value instanceof RunStore)
    && typeof value.load === 'function' && typeof value.save === 'function' && !('run' in value);
}

/** A native store over the application's `{load(runId), save(state)}`: `load` returns a
 * result, its JSON text or null; `save` receives a result. Its callables are temporary
 * when `temporary` is a list (a per-run accessor). */
function accessorStore(accessor, temporary) {
  const load = register(async (runId) => {
    const value = await accessor.load(runId);
    return value === undefined || value === null ? null : stateText({ state: value });
  });
  const save = register(async (_runId, json) => {
    await accessor.save(parseState(json));
    return null;
  });
  if (temporary) temporary.push(load, save);
  return native.NativeRunStore.accessor(load, save);
}

function nativeStore(store, what, p) {
  if (store instanceof RunStore) return store[STORE];
  if (isAccessor(store)) return accessorStore(store, p ? p.temporary : null);
  throw new TypeError(`${what} must be a run store (createSqliteRunStore, createPostgresRunStore, createInMemoryRunStore) or an object with load(runId) and save(state)`);
}

/** The per-run store: `store`, or the product's `state` accessor. */
function runStore(options, p) {
  if (options.state !== undefined && options.state !== null) {
    if (!isAccessor(options.state)) throw new TypeError('state on a run must be a state accessor (an object with load(runId) and save(state))');
    if (options.store !== undefined && options.store !== null) throw new TypeError('pass either store or a state accessor, not both');
    return nativeStore(options.state, 'state', p);
  }
  return options.store === undefined || options.store === null ? undefined : nativeStore(options.store, 'store', p);
}

/** What a continue continues: a state, or the stored run `runId` (of `store`, of a `state`
 * accessor, or of the agent's store). */
function continueTarget(options, p) {
  let { store } = options;
  let state = options.state;
  if (isAccessor(state)) {
    if (store !== undefined && store !== null) throw new TypeError('pass either store or a state accessor, not both');
    store = state;
    state = undefined;
  }
  const nativeS = store === undefined || store === null ? undefined : nativeStore(store, 'store', p);
  const runId = options.runId ?? undefined;
  if (runId !== undefined && typeof runId !== 'string') throw new TypeError('runId must be a string');
  if (runId !== undefined && (state === undefined || state === null) && (options.run === undefined || options.run === null)) {
    return { state: undefined, runId, store: nativeS };
  }
  // With a state and a runId both, the core checks that they agree.
  return { state: stateText({ state, run: options.run }), runId, store: nativeS };
}

/** Parses and checks state JSON text (rejects invalid or unsupported versions). */
function parseState(text) {
  return withMessages(parseJson(nativeCall(() => native.parseState(unquoteState(text)))));
}

module.exports = {
  RunStore,
  continueTarget,
  createInMemoryRunStore,
  createPostgresRunStore,
  createSqliteRunStore,
  nativeStore,
  parseState,
  runStore,
};
