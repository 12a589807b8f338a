'use strict';
// The host bridge: the one dispatcher for every call from the core into JavaScript
// (executors, hooks, validators, model clients, listeners, aborts), and the state it owns
// (the callable registry, the calls in flight, the batched answers, the run drivers). That
// state lives here only: the layers above register their functions (`register`,
// `callback`) and drive their runs (`newDriver`, `pollRun`) through this module. Every
// tool call goes through `drain`/`execute`/`settle`/`answer`: this is the hot path of a
// fan-out (benchmarks/node measures it).

const native = require('../native.js');
const { errorMessage, parseExact, toJson } = require('../values.js');
const { argumentError } = require('./arguments.js');

const OP_EXECUTE = 0;
const OP_CALL = 1;
const OP_ABORT = 2;
const OP_EVENT = 3;
const OP_STREAM = 4;
const OP_GENERATE = 5;
const OP_PHASE = 8;
const OP_DRAIN = 9;
const OP_POLL = 10;

const callables = new Map([[0, { fn: () => null, withRuntime: false }]]);
let nextCallable = 1;
const controllers = new Map();

function register(fn, withRuntime = false) {
  const id = nextCallable++;
  callables.set(id, { fn, withRuntime });
  return id;
}

/** `{$callback: id}`: a registered function in the core's definition format. */
const callback = (id) => ({ $callback: id });

// Answers cross back to Rust in batches, as ONE string of lines `<requestId> <1|0|2><payload>`
// (`1` + the value's JSON text, `0` + the error message as a JSON string, or `2` + the
// message of a value that cannot cross, as a JSON string; JSON text never holds a raw
// line break): those produced while a batch of calls is handled go at its
// end, later ones (async results) on the next turn of the event loop.
let answers = '';
let flushScheduled = false;

function flushAnswers() {
  flushScheduled = false;
  if (answers.length === 0) return;
  const text = answers;
  answers = '';
  native.completeMany(text);
}

function queueAnswer(line) {
  answers += line;
  if (!flushScheduled) {
    flushScheduled = true;
    setImmediate(flushAnswers);
  }
}

function answer(requestId, value) {
  let text;
  try {
    text = toJson(value);
  } catch (error) {
    invalid(requestId, error);
    return;
  }
  queueAnswer(`${requestId} 1${text}\n`);
}

/** The callable threw or rejected with `error` (any value). */
function fail(requestId, error) {
  queueAnswer(`${requestId} 0${JSON.stringify(errorMessage(error))}\n`);
}

/** The callable's value cannot cross (`error`: the ValueError saying why). */
function invalid(requestId, error) {
  queueAnswer(`${requestId} 2${JSON.stringify(errorMessage(error))}\n`);
}

// Only real generator objects are iterated (their yields are progress): any other object,
// even one with `next()` and `[Symbol.iterator]`, is a value like any other — iterating
// an arbitrary iterator-like object could never end.
const GENERATOR = Object.getPrototypeOf(Object.getPrototypeOf((function* g() {})()));
const ASYNC_GENERATOR = Object.getPrototypeOf(Object.getPrototypeOf((async function* g() {})()));

function isGenerator(value) {
  return GENERATOR.isPrototypeOf(value) || ASYNC_GENERATOR.isPrototypeOf(value);
}

const yieldToTimers = () => new Promise((resolve) => setImmediate(resolve));

/** Drains a tool's generator: its yields are progress, its return value the result. It
 * stops when the call is aborted (timeout, cancellation), and lets timers and I/O run
 * every few steps: a generator that never ends cannot starve the event loop. */
async function drainGenerator(iterator, context) {
  try {
    for (let steps = 1; ; steps++) {
      const step = await iterator.next();
      // Boxed: returning a thenable from an async function would resolve it again.
      if (step.done) return { value: step.value };
      context.emitProgress(step.value);
      if (steps % 32 === 0) await yieldToTimers();
      if (context._aborted) throw new Error('Tool call cancelled');
    }
  } finally {
    if (context._aborted) {
      try { await iterator.return(); } catch { /* it is being abandoned anyway */ }
    }
  }
}

/** One model request in flight: `request.signal` (created on first use) aborts when the
 * attempt is over — the run was cancelled or the request abandoned. */
class ModelAttempt {
  constructor(request) {
    this._controller = null;
    this._aborted = false;
    if (request !== null && typeof request === 'object') {
      const attempt = this;
      Object.defineProperty(request, 'signal', { get() { return attempt.signal; }, configurable: true });
    }
  }

  get signal() {
    if (!this._controller) {
      this._controller = new AbortController();
      if (this._aborted) this._controller.abort(new Error('Model request cancelled'));
    }
    return this._controller.signal;
  }

  _abort() {
    this._aborted = true;
    if (this._controller) this._controller.abort(new Error('Model request cancelled'));
  }

  /** A generator returned by `generate` is not a response (see `settle`). */
  emitProgress() {
    throw new TypeError('generate(request) must return a response (use stream(request) to stream)');
  }
}

/** Drains what a model client's `stream(request)` returned (an async iterable, an
 * iterable, or a promise of one): each event goes to the core as it comes (the core checks
 * it and says when the attempt is over), so a streamed run shows the deltas live. Timers
 * and I/O run every few events; an aborted attempt (timeout, cancellation) stops reading
 * and closes the iterator. */
async function drainModelStream(requestId, start, attempt) {
  const source = await start();
  const iterator = source !== null && typeof source === 'object' && typeof source[Symbol.asyncIterator] === 'function'
    ? source[Symbol.asyncIterator]()
    : source !== null && typeof source === 'object' && typeof source[Symbol.iterator] === 'function'
      ? source[Symbol.iterator]()
      : null;
  if (iterator === null) throw new TypeError('client.stream(request) must return an AsyncIterable (e.g. an async generator) of stream events');
  let finished = false;
  try {
    for (let steps = 1; ; steps++) {
      const step = await iterator.next();
      if (step.done) { finished = true; return; }
      if (attempt._aborted) return;
      let text;
      try {
        text = toJson(step.value);
      } catch (error) {
        throw new TypeError(`client.stream(request) yielded a value that cannot be read: ${errorMessage(error)}`);
      }
      native.modelStreamEvent(requestId, text);
      if (steps % 32 === 0) await yieldToTimers();
      if (attempt._aborted) return;
    }
  } finally {
    if (!finished && typeof iterator.return === 'function') {
      try { await iterator.return(); } catch { /* it is being abandoned anyway */ }
    }
  }
}

/** A thenable's outcome as a native promise of `{value}`: its `then` is called once, the
 * first callback counts, and what it fulfills with is the value (boxed, so not resolved
 * again: a thenable fulfilling with itself cannot loop through microtasks). A `then`
 * that never calls back is bounded by the call's timeout, like a promise that never
 * settles. */
function fromThenable(value, then) {
  return new Promise((resolve, reject) => {
    let done = false;
    try {
      then.call(value, (v) => {
        if (done) return;
        done = true;
        try {
          if (v instanceof Promise) v.then((w) => resolve({ value: w }), reject);
          else resolve({ value: v });
        } catch (error) {
          reject(error); // a Proxy's trap, a Promise subclass's then
        }
      }, (e) => {
        if (done) return;
        done = true;
        reject(e);
      });
    } catch (error) {
      if (!done) { done = true; reject(error); }
    }
  });
}

/** The `then` of a thenable, or undefined (a throwing getter is thrown). */
function thenOf(value) {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return undefined;
  const then = value.then;
  return typeof then === 'function' ? then : undefined;
}

/** Settles a request with what a callable returned (or threw): a value, a Promise, a
 * thenable or, for tools (`context` given), a (async) generator whose yields are progress
 * and whose return value is the result. While it runs, `context` (or a hook's `hookContext`)
 * is abortable by request id. Whatever the value does, the request gets an answer and
 * nothing is thrown. */
function settle(requestId, value, context, hookContext) {
  let promise;
  let boxed = true;
  try {
    if (context && isGenerator(value)) promise = drainGenerator(value, context);
    else if (value instanceof Promise) {
      promise = value;
      boxed = false;
    } else {
      const then = thenOf(value);
      if (then === undefined) {
        answer(requestId, value);
        return;
      }
      promise = fromThenable(value, then);
    }
  } catch (error) {
    fail(requestId, error);
    return;
  }
  const abortable = context ?? hookContext;
  if (abortable) controllers.set(requestId, abortable);
  try {
    promise.then(
      (v) => { if (abortable) controllers.delete(requestId); answer(requestId, boxed ? v.value : v); },
      (e) => { if (abortable) controllers.delete(requestId); fail(requestId, e); },
    );
  } catch (error) {
    // A Promise subclass whose `then` throws.
    if (abortable) controllers.delete(requestId);
    fail(requestId, error);
  }
}

const noop = () => {};

/** The `context` argument of executors and hooks. Its AbortSignal is created on first
 * use: most tools never look at it, and an AbortController per call is costly. */
class ToolContext {
  constructor(requestId, runId, agentId, stepIndex, context, toolCall, attempt, idempotencyKey) {
    this._requestId = requestId;
    this._controller = null;
    this._aborted = false;
    this.runId = runId;
    this.agentId = agentId;
    this.stepIndex = stepIndex;
    this.context = context;
    this.toolCall = toolCall;
    // docs/behaviour.md §15: the attempt (from 1) and the key that is the same for every
    // attempt, both from the core.
    this.attempt = attempt;
    this.idempotencyKey = idempotencyKey;
  }

  /** A context from runtime data `{runId, agentId, stepIndex, context, toolCall, attempt,
   * idempotencyKey}`. */
  static of(requestId, runtime) {
    const context = new ToolContext(requestId, runtime.runId, runtime.agentId, runtime.stepIndex, runtime.context,
      runtime.toolCall, runtime.attempt, runtime.idempotencyKey);
    // An MCP tool's annotations (readOnlyHint, destructiveHint, …), for approval predicates.
    if (runtime.toolAnnotations !== undefined) context.toolAnnotations = runtime.toolAnnotations;
    return context;
  }

  /** Aborted when the call times out or the run is cancelled. */
  get signal() {
    if (!this._controller) {
      this._controller = new AbortController();
      if (this._aborted) this._controller.abort(new Error('Tool call cancelled'));
    }
    return this._controller.signal;
  }

  _abort() {
    this._aborted = true;
    if (this._controller) this._controller.abort(new Error('Tool call cancelled'));
  }

  /** Reports progress (a value that cannot be stored fails the call with
   * `tool_event_invalid`). */
  emitProgress(value) {
    let text;
    try {
      text = toJson(value);
    } catch (error) {
      native.emitProgress(this._requestId, '', errorMessage(error));
      return;
    }
    native.emitProgress(this._requestId, text);
  }

  /** Replaces the run's context (throws a TypeError or RangeError for a value that
   * cannot be stored). */
  setContext(value) {
    let text;
    try {
      text = toJson(value);
    } catch (error) {
      throw argumentError(error, 'setContext');
    }
    try {
      native.setContext(this._requestId, text);
    } catch (error) {
      throw argumentError(error, 'setContext');
    }
  }
}

function dispatch(op, callableId) {
  if (op === OP_POLL) pollRun(callableId);
  else if (op === OP_DRAIN) drain();
}

/** Polls a run driven on this thread; then takes the calls the poll queued. */
function pollRun(driver) {
  if (native.pollRun(driver)) drain();
}

// Runs driven on this thread (`run`, `continueRun`) are named by ids (u32).
let nextDriver = 0;
function newDriver() {
  nextDriver = nextDriver >= 0xfffffffe ? 1 : nextDriver + 1;
  return nextDriver;
}

function drain() {
  const text = native.takeOutbox();
  // `B`: the batch holds integers beyond 2^53 (the core says so; JSON.parse otherwise).
  const batch = text.charCodeAt(0) === 66 ? parseExact(text.slice(1)) : JSON.parse(text);
  // The runtime data of the tool phase the following EXECUTE entries belong to.
  let phase = null;
  for (let i = 0; i < batch.length; i++) {
    const call = batch[i];
    const callOp = call[0];
    // Each entry is guarded on its own: nothing a host value does may throw out of the
    // dispatcher (an exception there would end the process).
    try {
      if (callOp === OP_EXECUTE) execute(call, phase);
      else if (callOp === OP_PHASE) phase = call[3];
      else handle(callOp, call[1], call[2], call[3]);
    } catch (error) {
      if (callOp === OP_EXECUTE || callOp === OP_CALL) fail(call[2], error);
    }
  }
  flushAnswers();
}

// The optimized code that builds tool contexts depends (weakly) on their map: when a full
// GC collects every context (all calls done, e.g. between two runs), V8 throws that code
// away and compiles it again on the next calls. Keeping the last context alive keeps it.
let lastContext = null;

/** `[OP_EXECUTE, callable, request, input, callId, toolName, toolCallInput, attempt]`; the
 * idempotency key is `<runId>:<callId>` (docs/behaviour.md §15), made here from the phase's
 * run id. */
function execute(call, phase) {
  const requestId = call[2];
  const entry = callables.get(call[1]);
  if (!entry) { fail(requestId, new Error('callable released')); return; }
  // Each call gets its own copy of an object context (`contextText`: its JSON text).
  const shared = phase.contextText === undefined ? phase.context
    : phase.contextBig ? parseExact(phase.contextText) : JSON.parse(phase.contextText);
  const context = new ToolContext(requestId, phase.runId, phase.agentId, phase.stepIndex, shared,
    { id: call[4], name: call[5], input: call[6] }, call[7], `${phase.runId}:${call[4]}`);
  lastContext = context;
  let value;
  try {
    value = entry.fn(call[3], context);
  } catch (error) {
    fail(requestId, error);
    return;
  }
  settle(requestId, value, context);
}

function handle(op, callableId, requestId, payload) {
  switch (op) {
    case OP_CALL: {
      const entry = callables.get(callableId);
      if (!entry) { fail(requestId, new Error('callable released')); return; }
      const args = payload;
      // A hook's context (its signal) is abortable while the call is in flight, as an
      // executor's is: the core aborts it when the call times out or the run is cancelled.
      const context = entry.withRuntime ? ToolContext.of(requestId, args[1]) : null;
      if (context) args[1] = context;
      let value;
      try {
        value = entry.fn(...args);
      } catch (error) {
        fail(requestId, error);
        return;
      }
      settle(requestId, value, null, context);
      return;
    }
    case OP_STREAM: {
      const entry = callables.get(callableId);
      if (!entry) { fail(requestId, new Error('callable released')); return; }
      const attempt = new ModelAttempt(payload);
      controllers.set(requestId, attempt);
      const done = () => controllers.delete(requestId);
      drainModelStream(requestId, () => entry.fn(payload), attempt).then(
        () => { done(); answer(requestId, null); },
        (e) => { done(); fail(requestId, e); },
      );
      return;
    }
    case OP_GENERATE: {
      const entry = callables.get(callableId);
      if (!entry) { fail(requestId, new Error('callable released')); return; }
      const attempt = new ModelAttempt(payload);
      let value;
      try {
        value = entry.fn(payload);
      } catch (error) {
        fail(requestId, error);
        return;
      }
      // The attempt is abortable (its `request.signal`) while the answer is pending.
      settle(requestId, value, attempt);
      return;
    }
    case OP_ABORT: {
      const context = controllers.get(requestId);
      if (context) {
        controllers.delete(requestId);
        context._abort();
      }
      return;
    }
    case OP_EVENT: {
      const entry = callables.get(callableId);
      if (!entry) return;
      try {
        const result = entry.fn(payload);
        const then = thenOf(result);
        if (then !== undefined) fromThenable(result, then).then(noop, reportListenerError);
      } catch (error) {
        reportListenerError(error);
      }
      return;
    }
    default:
  }
}

function reportListenerError(error) {
  process.emitWarning(`onEvent listener threw: ${errorMessage(error)}`);
}

native.registerHost(dispatch);

module.exports = {
  callables,
  callback,
  newDriver,
  noop,
  pollRun,
  register,
  thenOf,
};
