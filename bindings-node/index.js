'use strict';
// @phaseo/agent-sdk — the public JavaScript layer over the Rust core. It only adapts host
// idioms (functions, Promises, async generators, AbortSignal, zod-like validators, Error
// classes); every behaviour lives in the core.

const native = require('./native.js');
const tracing = require('./tracing.js');
const {
  MAX_STATE_DEPTH, ValueError, errorMessage, holdsBigInt, mayHoldBigInt, parseExact, parseJson, toJson, writeExact,
} = require('./values.js');

// ---------------------------------------------------------------------------------------
// Errors

class AgentError extends Error {
  constructor(message, { code = 'tool_failed', result = undefined, ...details } = {}) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.result = result;
    Object.assign(this, details);
  }
}
class AgentSchemaValidationError extends AgentError {}
class AgentToolTimeoutError extends AgentError {}
class AgentUnknownToolError extends AgentError {}
class AgentToolError extends AgentError {}
class AgentMaxStepsError extends AgentError {}
class AgentContinueError extends AgentError {}
class AgentStateError extends AgentError {}
class AgentModelError extends AgentError {}
class AgentGatewayError extends AgentModelError {}
class AgentDefinitionError extends AgentError {}
class AgentCancelledError extends AgentError {}
/** The run store failed (code `store_failed`); a run under way has its state in `result`. */
class AgentStoreError extends AgentError {}
/** Another worker took over the run this one worked on (code `lease_lost`). */
class AgentLeaseLostError extends AgentError {}
/** An MCP server could not start, died, or broke the protocol (code `mcp_failed`). */
class AgentMcpError extends AgentError {}

const ERROR_CLASSES = {
  tool_input_invalid: AgentSchemaValidationError,
  tool_output_invalid: AgentSchemaValidationError,
  tool_event_invalid: AgentSchemaValidationError,
  agent_output_invalid: AgentSchemaValidationError,
  unknown_tool: AgentUnknownToolError,
  tool_timeout: AgentToolTimeoutError,
  tool_failed: AgentToolError,
  max_steps: AgentMaxStepsError,
  continue_invalid: AgentContinueError,
  state_invalid: AgentStateError,
  model_failed: AgentModelError,
  gateway: AgentGatewayError,
  definition_invalid: AgentDefinitionError,
  cancelled: AgentCancelledError,
  store_failed: AgentStoreError,
  lease_lost: AgentLeaseLostError,
  mcp_failed: AgentMcpError,
};

/** The error class of a SPEC §9 code (`AgentError` for a code this version does not know). */
function errorClass(code) {
  return Object.prototype.hasOwnProperty.call(ERROR_CLASSES, code) ? ERROR_CLASSES[code] : AgentError;
}

const MARKER = '\u0001phaseo:';

/** Turns an encoded native error into the matching AgentError class. */
function decodeError(error) {
  const text = error && typeof error.message === 'string' ? error.message : '';
  const at = text.indexOf(MARKER);
  if (at < 0) return error;
  const body = parseJson(text.slice(at + MARKER.length));
  const Class = errorClass(body.code);
  const details = { code: body.code, result: body.result ? withStateJSON(body.result) : undefined };
  if (body.target) details.target = body.target;
  if (body.gateway) {
    details.status = body.gateway.status;
    details.statusText = body.gateway.statusText;
    details.requestId = body.gateway.requestId ?? undefined;
    details.reason = body.gateway.reason ?? undefined;
  }
  return new Class(body.message, details);
}

function rethrow(error) {
  throw decodeError(error);
}

function nativeCall(fn) {
  try {
    return fn();
  } catch (error) {
    return rethrow(error);
  }
}

// ---------------------------------------------------------------------------------------
// The host bridge: one dispatcher for every call from the core into JavaScript.

// `Symbol.asyncDispose` (Node 20.4+, 18.18+); the registry symbol Node uses otherwise.
const ASYNC_DISPOSE = Symbol.asyncDispose ?? Symbol.for('nodejs.asyncDispose');

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
  constructor(requestId, runId, agentId, stepIndex, context, toolCall) {
    this._requestId = requestId;
    this._controller = null;
    this._aborted = false;
    this.runId = runId;
    this.agentId = agentId;
    this.stepIndex = stepIndex;
    this.context = context;
    this.toolCall = toolCall;
  }

  /** A context from runtime data `{runId, agentId, stepIndex, context, toolCall}`. */
  static of(requestId, runtime) {
    const context = new ToolContext(requestId, runtime.runId, runtime.agentId, runtime.stepIndex, runtime.context, runtime.toolCall);
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

/** `[OP_EXECUTE, callable, request, input, callId, toolName, toolCallInput]`. */
function execute(call, phase) {
  const requestId = call[2];
  const entry = callables.get(call[1]);
  if (!entry) { fail(requestId, new Error('callable released')); return; }
  // Each call gets its own copy of an object context (`contextText`: its JSON text).
  const shared = phase.contextText === undefined ? phase.context
    : phase.contextBig ? parseExact(phase.contextText) : JSON.parse(phase.contextText);
  const context = new ToolContext(requestId, phase.runId, phase.agentId, phase.stepIndex, shared,
    { id: call[4], name: call[5], input: call[6] });
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

// ---------------------------------------------------------------------------------------
// Validators

const SCHEMA = Symbol('phaseo.jsonSchema');

function formatIssues(error) {
  try {
    if (error && Array.isArray(error.issues)) {
      return error.issues
        .map((i) => (i.path && i.path.length ? `${i.path.join('.')}: ${errorMessage(i.message)}` : errorMessage(i.message)))
        .join('; ');
    }
  } catch { /* odd issues: the error's own text */ }
  return errorMessage(error);
}

/** A validator backed by the core's JSON Schema engine (draft 2020-12). */
function jsonSchemaValidator(schema) {
  const compiled = nativeCall(() => new native.NativeJsonSchema(schema));
  return {
    [SCHEMA]: schema,
    schema,
    safeParse(value) {
      const problem = compiled.check(toJson(value));
      return problem === null || problem === undefined
        ? { success: true, data: value }
        : { success: false, error: new Error(problem) };
    },
    parse(value) {
      const problem = compiled.check(toJson(value));
      if (problem !== null && problem !== undefined) throw new Error(problem);
      return value;
    },
  };
}

function describe(validator) {
  if (validator && typeof validator.toJSONSchema === 'function') {
    try { return validator.toJSONSchema(); } catch { return undefined; }
  }
  return undefined;
}

/** `{$callback: id}`: a registered function in the core's definition format. */
const callback = (id) => ({ $callback: id });

/** A registered validator function, described by `schema` when `describes` and known. */
function hostValidator(fn, schema, describes) {
  const spec = callback(register(fn));
  if (describes && schema !== undefined) spec.schema = schema;
  return spec;
}

/** A validator in the core's definition format: a JSON Schema, or a registered function
 * (`describes`: with the JSON Schema a schema library reports, which the core then shows
 * the model). */
function validatorSpec(validator, describes = true) {
  if (validator === undefined || validator === null) return undefined;
  if (validator[SCHEMA]) return validator[SCHEMA];
  if (typeof validator === 'function') return callback(register((v) => validator(v)));
  if (typeof validator.safeParse === 'function') {
    return hostValidator((value) => {
      const outcome = validator.safeParse(value);
      if (outcome.success) return outcome.data;
      throw new Error(formatIssues(outcome.error));
    }, describe(validator), describes);
  }
  if (typeof validator.parse === 'function') {
    return hostValidator((value) => {
      try { return validator.parse(value); } catch (error) { throw new Error(formatIssues(error)); }
    }, describe(validator), describes);
  }
  if (typeof validator === 'object') return storable(validator, 'schema');
  throw new TypeError('a validator must be a function, an object with parse()/safeParse(), or a JSON Schema');
}

// ---------------------------------------------------------------------------------------
// Tools

const SPEC = Symbol('phaseo.toolSpec');

/** `nextTurnParams` with its `tools` as ids: the product lists tool objects there, ids
 * work too (anything else is left for the core to refuse by name). */
function nextTurnTools(params) {
  if (params === null || typeof params !== 'object' || !Array.isArray(params.tools)) return params;
  const ids = params.tools.map((t) => (t !== null && typeof t === 'object' && typeof t.id === 'string' ? t.id : t));
  return { ...params, tools: ids };
}

/** A `nextTurnParams(input, context)` function whose answer may list tool objects. */
function nextTurnFn(fn) {
  return (input, context) => {
    const value = fn(input, context);
    return thenOf(value) === undefined ? nextTurnTools(value) : Promise.resolve(value).then(nextTurnTools);
  };
}

/** Checks and returns a tool definition (SPEC §2). */
function defineTool(definition) {
  if (!definition || typeof definition.id !== 'string') throw new AgentDefinitionError('Invalid definition of tool: id is required', { code: 'definition_invalid' });
  const d = definition;
  const spec = {
    id: d.id,
    description: d.description ?? '',
    parameters: d.parameters === undefined || d.parameters === null ? undefined : storable(d.parameters, 'parameters'),
    execute: typeof d.execute === 'function' ? callback(register(d.execute.bind(d))) : undefined,
    timeoutMs: d.timeoutMs ?? undefined,
    requireApproval: typeof d.requireApproval === 'function' ? callback(register(d.requireApproval, true)) : Boolean(d.requireApproval),
    onError: d.onError ?? undefined,
    inputSchema: validatorSpec(d.inputSchema),
    outputSchema: validatorSpec(d.outputSchema, false),
    eventSchema: validatorSpec(d.eventSchema, false),
    onToolCalled: typeof d.onToolCalled === 'function' ? callback(register(d.onToolCalled, true)) : undefined,
    onResponseReceived: typeof d.onResponseReceived === 'function' ? callback(register(d.onResponseReceived, true)) : undefined,
    nextTurnParams: typeof d.nextTurnParams === 'function' ? callback(register(nextTurnFn(d.nextTurnParams), true))
      : d.nextTurnParams === undefined || d.nextTurnParams === null
        ? undefined : storable(nextTurnTools(d.nextTurnParams), 'nextTurnParams'),
    strict: checkedBoolean(d.strict, `Invalid definition of tool '${d.id}': strict`),
    inputExamples: checkedList(d.inputExamples, `Invalid definition of tool '${d.id}': inputExamples`),
  };
  if (d.nextTurnParams !== null && typeof d.nextTurnParams === 'object') {
    const fn = Object.keys(d.nextTurnParams).find((k) => typeof d.nextTurnParams[k] === 'function');
    if (fn !== undefined) {
      throw new AgentDefinitionError(`Invalid definition of tool '${d.id}': nextTurnParams.${fn} is a function; give nextTurnParams itself as a function (input, context) => ({${fn}: ...})`, { code: 'definition_invalid' });
    }
  }
  if (d.execute !== undefined && d.execute !== false && d.execute !== null && typeof d.execute !== 'function') {
    throw new AgentDefinitionError(`Invalid definition of tool '${d.id}': execute must be a function or false`, { code: 'definition_invalid' });
  }
  const parameters = nativeCall(() => native.checkTool(spec));
  return Object.freeze({ ...d, parameters, [SPEC]: spec });
}

/** The product's short name of `defineTool`. */
const tool = defineTool;

// ---------------------------------------------------------------------------------------
// Stop conditions and clients

const STOP = Symbol('phaseo.stopCondition');
const stop = (kind, value) => Object.freeze({ [STOP]: { kind, value }, toString: () => `${kind}(${value})` });

/** Stops once `n` steps completed (`step_count:<n>`). */
const stepCountIs = (n) => stop('stepCountIs', n);
/** Stops once total tokens reach `n` (`max_tokens:<n>`). */
const maxTokensUsed = (n) => stop('maxTokensUsed', n);
/** Stops once the cost reaches `x` (`max_cost:<x>`). */
const maxCost = (x) => stop('maxCost', x);
/** Stops once the run is `ms` milliseconds old (`max_duration:<ms>`). */
const maxDuration = (ms) => stop('maxDuration', ms);
/** Stops once any step called `name` (`tool_call:<name>`). */
const hasToolCall = (name) => stop('hasToolCall', name);
/** Stops once any step finished with `reason` (`finish_reason:<reason>`). */
const finishReasonIs = (reason) => stop('finishReasonIs', reason);

function stopSpecs(stopWhen, temporary) {
  if (stopWhen === undefined || stopWhen === null) return undefined;
  const list = Array.isArray(stopWhen) ? stopWhen : [stopWhen];
  return list.map((condition) => {
    if (condition && condition[STOP]) {
      const { kind, value } = condition[STOP];
      return { [kind]: value ?? null };
    }
    if (typeof condition === 'function') {
      const id = register(condition);
      if (temporary) temporary.push(id);
      return callback(id);
    }
    throw new TypeError('stopWhen entries must come from stepCountIs()/… or be functions');
  });
}

const CLIENT = Symbol('phaseo.client');

function nativeClient(make) {
  const handle = nativeCall(make);
  return { [CLIENT]: handle, get cursor() { return handle.cursor; } };
}

/** A client answering with the given responses, in order (`{text}`, `{toolCalls}`, `{fail}`). */
function createScriptedClient(responses, options = {}) {
  const text = argumentJson(responses, 'responses');
  return nativeClient(() => native.NativeModelClient.scripted(text, options.used ?? 0));
}

/** A client that calls every offered tool once, then answers with a summary. */
function createTestClient() {
  return nativeClient(() => native.NativeModelClient.test());
}

/** The transport options both HTTP clients take, at the top level or (the product's
 * form) in `clientOptions` (`baseURL` is accepted for `baseUrl`). */
const TRANSPORT_KEYS = ['apiKey', 'baseUrl', 'model', 'timeoutMs', 'headers'];
const CLIENT_OPTION_KEYS = new Set(['apiKey', 'baseUrl', 'baseURL', 'timeoutMs', 'headers', 'fetchImpl']);

/** The gateway's body options (the product's names) and the request body field each sets. */
const GATEWAY_BODY_KEYS = {
  provider: 'provider',
  reasoning: 'reasoning',
  temperature: 'temperature',
  maxOutputTokens: 'max_output_tokens',
  parallelToolCalls: 'parallel_tool_calls',
  metadata: 'metadata',
  user: 'user',
  responseFormat: 'response_format',
  includeMeta: 'meta',
  webSearchOptions: 'web_search_options',
  plugins: 'plugins',
  toolChoice: 'tool_choice',
  providerOptions: 'provider_options',
  promptCacheKey: 'prompt_cache_key',
};

function clientOptionError(what, message) {
  return new AgentDefinitionError(`${what}: ${message}`, { code: 'definition_invalid' });
}

/** The transport part of HTTP client options, checked (an unknown key is refused by name:
 * a misspelled option silently ignored would only show as a failed request later). */
function transportSpec(options, what, allowed) {
  if (options === null || typeof options !== 'object') throw clientOptionError(what, 'options must be an object');
  for (const key of Object.keys(options)) {
    if (options[key] !== undefined && !allowed.has(key)) {
      throw clientOptionError(what, `unknown option '${key}' (known: ${[...allowed].join(', ')})`);
    }
  }
  const spec = {};
  for (const key of TRANSPORT_KEYS) if (options[key] !== undefined && options[key] !== null) spec[key] = options[key];
  const inner = options.clientOptions;
  if (inner !== undefined && inner !== null) {
    if (typeof inner !== 'object') throw clientOptionError(what, 'clientOptions must be an object');
    for (const key of Object.keys(inner)) {
      if (inner[key] === undefined) continue;
      if (!CLIENT_OPTION_KEYS.has(key)) throw clientOptionError(what, `unknown clientOptions key '${key}' (known: ${[...CLIENT_OPTION_KEYS].join(', ')})`);
      if (key === 'fetchImpl') throw clientOptionError(what, 'clientOptions.fetchImpl is not supported: requests are made by the native core (use baseUrl and headers)');
    }
    const pick = (name) => inner[name] ?? undefined;
    spec.apiKey ??= pick('apiKey');
    spec.baseUrl ??= pick('baseUrl') ?? pick('baseURL');
    spec.timeoutMs ??= pick('timeoutMs');
    if (inner.headers !== undefined && inner.headers !== null) spec.headers = { ...inner.headers, ...(spec.headers ?? {}) };
  }
  return spec;
}

const GATEWAY_KEYS = new Set([...TRANSPORT_KEYS, 'clientOptions', 'preset', 'requestOptions', 'client', 'gatewayTools', ...Object.keys(GATEWAY_BODY_KEYS)]);

/** The Phaseo gateway client (`POST {baseUrl}/responses`); `apiKey` defaults to
 * `PHASEO_API_KEY`, `baseUrl` to `PHASEO_BASE_URL` or `https://api.phaseo.app/v1`. Takes the
 * product's options too: `clientOptions: {apiKey, baseURL, timeoutMs, headers}`, `preset`
 * (the model `@<preset>` when none is set), the body options (`toolChoice`,
 * `parallelToolCalls`, `responseFormat`, `metadata`, …) and `requestOptions` (any other
 * body field); what the agent and run set wins over all of them. */
function createGatewayAgentClient(options = {}) {
  const what = 'createGatewayAgentClient';
  const spec = transportSpec(options, what, GATEWAY_KEYS);
  if (options.client !== undefined && options.client !== null) {
    throw clientOptionError(what, 'client (an @phaseo/sdk instance) is not supported: pass clientOptions instead');
  }
  if (options.gatewayTools !== undefined && options.gatewayTools !== null) {
    throw clientOptionError(what, 'gatewayTools is not supported: define the tools on the agent');
  }
  if (options.preset !== undefined && options.preset !== null) {
    if (typeof options.preset !== 'string' || options.preset === '') throw clientOptionError(what, 'preset must be a non-empty string');
    spec.preset = options.preset.startsWith('@') ? options.preset.slice(1) : options.preset;
  }
  const extra = options.requestOptions;
  if (extra !== undefined && extra !== null && (typeof extra !== 'object' || Array.isArray(extra))) {
    throw clientOptionError(what, 'requestOptions must be an object of request body fields');
  }
  const body = { ...(extra ?? {}) };
  for (const [key, field] of Object.entries(GATEWAY_BODY_KEYS)) {
    if (options[key] !== undefined && options[key] !== null) body[field] = options[key];
  }
  if (Object.keys(body).length > 0) spec.bodyDefaults = argumentJson(body, `${what}: requestOptions`);
  return nativeClient(() => native.NativeModelClient.gateway(spec));
}

const OPENAI_KEYS = new Set([...TRANSPORT_KEYS, 'clientOptions']);

/** An OpenAI-compatible chat-completions client (OpenAI, vLLM, Ollama, llama.cpp, LM
 * Studio); defaults from `OPENAI_BASE_URL` / `OPENAI_API_KEY`. */
function createOpenAICompatibleClient(options = {}) {
  return nativeClient(() => native.NativeModelClient.openai(transportSpec(options, 'createOpenAICompatibleClient', OPENAI_KEYS)));
}

/** A host client: a function `(request) => response`, or an object with
 * `generate(request)` and/or `stream(request)` (an (async) iterable of stream events). */
function clientSpec(client, temporary) {
  if (client && client[CLIENT]) return { spec: { kind: 'native' }, scripted: client[CLIENT] };
  const temp = (fn) => { const id = register(fn); temporary.push(id); return id; };
  if (typeof client === 'function') return { spec: { kind: 'host', generate: temp((request) => client(request)) }, scripted: null };
  const generate = client && typeof client.generate === 'function';
  const stream = client && typeof client.stream === 'function';
  if (generate || stream) {
    return {
      spec: {
        kind: 'host',
        generate: generate ? temp((request) => client.generate(request)) : undefined,
        stream: stream ? temp((request) => client.stream(request)) : undefined,
      },
      scripted: null,
    };
  }
  throw new TypeError('client must come from createScriptedClient()/createTestClient()/createGatewayAgentClient(), be a function (request) => response, or have generate(request) or stream(request)');
}

// ---------------------------------------------------------------------------------------
// Agents

/** A fixed value (checked as every definition value is) or a per-turn function, whose
 * results cross as every callable's do. */
function dynamicSpec(value, what) {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'function' ? callback(register(value)) : storable(value, what);
}

function overridesSpec(o, temporary) {
  return {
    model: o.model ?? undefined,
    models: o.models ?? undefined,
    preset: o.preset ?? undefined,
    maxSteps: o.maxSteps ?? undefined,
    stopWhen: stopSpecs(o.stopWhen, temporary),
    modelRetry: o.modelRetry ?? undefined,
    toolExecution: o.toolExecution ?? undefined,
    temperature: o.temperature ?? undefined,
    maxOutputTokens: o.maxOutputTokens ?? undefined,
    topP: o.topP ?? undefined,
    toolChoice: o.toolChoice === undefined || o.toolChoice === null
      ? undefined : storable(o.toolChoice, 'Invalid run options: toolChoice'),
    parallelToolCalls: checkedBoolean(o.parallelToolCalls, 'Invalid run options: parallelToolCalls'),
    activeTools: checkedList(o.activeTools, 'Invalid run options: activeTools'),
  };
}

/** `value` when it is a boolean (or absent); otherwise a clear definition error. */
function checkedBoolean(value, what) {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw new AgentDefinitionError(`${what} must be a boolean, got ${typeof value}`, { code: 'definition_invalid' });
  return value;
}

/** `value` when it is an array (or absent) that can be stored; otherwise a clear
 * definition error (not a list) or host error (a cycle, too deep, too large). */
function checkedList(value, what) {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw new AgentDefinitionError(`${what} must be a list, got ${typeof value}`, { code: 'definition_invalid' });
  return storable(value, what);
}

function cancelToken(signal) {
  if (!signal) return { token: null, detach: noop };
  const token = new native.NativeCancelToken();
  if (signal.aborted) {
    token.cancel();
    return { token, detach: noop };
  }
  const onAbort = () => token.cancel();
  signal.addEventListener('abort', onAbort, { once: true });
  return { token, detach: () => signal.removeEventListener('abort', onAbort) };
}

/** A caller's argument that cannot be stored, as the host error it throws: RangeError
 * for a value too deep or an integer too large, TypeError otherwise. */
function argumentError(error, what) {
  const text = errorMessage(error);
  const message = `${what}: ${text}`;
  // The core checks the depth of what JSON.stringify wrote: its refusal has no kind.
  const range = error instanceof ValueError ? error.kind === 'depth' || error.kind === 'integer'
    : /nested more than \d+ levels deep|does not fit in 64 bits/.test(text);
  return range ? new RangeError(message) : new TypeError(message);
}

/** A definition's value, checked (a cycle or too deep a value would otherwise reach the
 * native conversion). */
function storable(value, what) {
  argumentJson(value, what);
  return value;
}

/** The JSON text of a caller's argument (checked here, depth included: once per run). */
function argumentJson(value, what) {
  try {
    return writeExact(value);
  } catch (error) {
    throw argumentError(error, what);
  }
}

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

function decisionSpecs(list) {
  if (!list) return undefined;
  return list.map((d) => (typeof d === 'string' ? d : { toolCallId: d.toolCallId, reason: d.reason ?? undefined }));
}

function prepare(options) {
  const temporary = [];
  const { spec: client, scripted } = clientSpec(options.client, temporary);
  const onEvent = typeof options.onEvent === 'function' ? register(options.onEvent) : undefined;
  if (onEvent !== undefined) temporary.push(onEvent);
  const overrides = overridesSpec(options, temporary);
  const cancel = cancelToken(options.signal);
  const release = () => {
    for (const id of temporary) callables.delete(id);
    cancel.detach();
  };
  return { client, scripted, onEvent, overrides, token: cancel.token, release, temporary };
}

// ---------------------------------------------------------------------------------------
// Results: plain JSON data whose growing parts are parsed on first read.

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
  return writeExact({ ...this });
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

async function settleRun(promise, prepared) {
  try {
    // A run polled on this thread hands its events to the listener right after each poll,
    // before its promise settles: no barrier needed.
    return stateOf(await promise);
  } catch (error) {
    throw decodeError(error);
  } finally {
    prepared.release();
  }
}

class AgentStreamResult {
  constructor(nativeStream, prepared) {
    this._native = nativeStream;
    this._prepared = prepared;
    this._result = null;
  }

  async *_items() {
    const cursor = this._native.cursor();
    for (;;) {
      let text;
      try {
        text = await cursor.next();
      } catch (error) {
        throw decodeError(error);
      }
      if (text === null) return;
      yield parseJson(text);
    }
  }

  async *_filter(pick) {
    for await (const item of this._items()) {
      if (item.type === 'result') return;
      const value = pick(item);
      if (value !== undefined) yield value;
    }
  }

  /** Every event, then `{type: "result", result}`. */
  getFullStream() { return this._items(); }
  /** Text deltas. */
  getTextStream() { return this._filter((e) => (e.type === 'response.output_text.delta' ? e.delta : undefined)); }
  /** Reasoning deltas. */
  getReasoningStream() { return this._filter((e) => (e.type === 'response.reasoning.delta' ? e.delta : undefined)); }
  /** Items (message, tool_call, tool_result, error, output). */
  getItemsStream() { return this._filter((e) => (e.type === 'response.item' ? e.item : undefined)); }
  /** `tool.*` events. */
  getToolStream() { return this._filter((e) => (e.type.startsWith('tool.') ? e : undefined)); }
  /** Every event (without the result). */
  getEventStream() { return this._filter((e) => e); }

  /** The final result (rejects if the run failed). */
  getResult() {
    if (!this._result) {
      this._result = (async () => {
        try {
          for await (const item of this._items()) {
            if (item.type === 'result') return withStateJSON(item.result);
          }
          throw new Error('stream ended without a result');
        } finally {
          this._prepared.release();
        }
      })();
    }
    return this._result;
  }

  /** The final output as text. */
  async getText() {
    const result = await this.getResult();
    const output = result.output;
    if (output === null || output === undefined) return '';
    return typeof output === 'string' ? output : toJson(output);
  }

  /** Cancels the run; resolves with its (cancelled) result. */
  async cancel(reason) {
    this._native.cancel(reason === undefined ? undefined : errorMessage(reason));
    return this.getResult();
  }

  then(onFulfilled, onRejected) { return this.getResult().then(onFulfilled, onRejected); }
  catch(onRejected) { return this.getResult().catch(onRejected); }
  finally(onFinally) { return this.getResult().finally(onFinally); }
  [Symbol.asyncIterator]() { return this.getFullStream(); }
}

/** The options of a run as the native layer takes them (values as checked JSON text). */
function runSpec(options, p) {
  return {
    input: argumentJson(options.input ?? null, 'input'),
    context: options.context === undefined || options.context === null ? undefined : argumentJson(options.context, 'context'),
    messages: options.messages === undefined || options.messages === null ? undefined : argumentJson(options.messages, 'messages'),
    options: p.overrides,
    onEvent: p.onEvent,
    traceparent: tracing.currentTraceparent(),
  };
}

class Agent {
  constructor(definition, nativeAgent) {
    this.id = definition.id;
    this.definition = definition;
    this._native = nativeAgent;
  }

  /** Stops the agent's MCP servers (stdio children end, HTTP sessions close); a later run
   * starts them again. Also `await using agent = createAgent(...)`. */
  async close() {
    await this._native.close();
  }

  async [ASYNC_DISPOSE]() {
    await this.close();
  }

  /** Runs until the agent completes, stops, pauses, is cancelled or fails (rejects with an
   * AgentError carrying `.result`). */
  async run(options) {
    const p = prepare(options);
    let promise;
    const driver = newDriver();
    try {
      promise = this._native.run(driver, runSpec(options, p), p.client, p.scripted, p.token, runStore(options, p));
    } catch (error) {
      p.release();
      throw decodeError(error);
    }
    queueMicrotask(() => pollRun(driver));
    return settleRun(promise, p);
  }

  /** Continues a paused run (`run` or `state`: a result or its JSON text). The state is not
   * changed; a refused continue rejects with AgentContinueError and leaves it usable. */
  async continueRun(options) {
    const p = prepare(options);
    let promise;
    const driver = newDriver();
    try {
      const target = continueTarget(options, p);
      promise = this._native.continueRun(driver, target.state, this._continueSpec(options, p), p.client, p.scripted, p.token,
        target.runId, target.store);
    } catch (error) {
      p.release();
      throw decodeError(error);
    }
    queueMicrotask(() => pollRun(driver));
    return settleRun(promise, p);
  }

  /** Runs in the background; returns the replayable stream result (also awaitable). */
  stream(options) {
    const p = prepare(options);
    try {
      return new AgentStreamResult(this._native.stream(runSpec(options, p), p.client, p.scripted, p.token, runStore(options, p)), p);
    } catch (error) {
      p.release();
      throw decodeError(error);
    }
  }

  /** Continues a paused run in the background, as a stream. */
  continueStream(options) {
    const p = prepare(options);
    try {
      const target = continueTarget(options, p);
      return new AgentStreamResult(this._native.continueStream(target.state, this._continueSpec(options, p), p.client, p.scripted,
        p.token, target.runId, target.store), p);
    } catch (error) {
      p.release();
      throw decodeError(error);
    }
  }

  /** Recovers the stored run `runId` whose worker died (its lease expired): goes on from
   * its last checkpoint with the decisions its claim stored. `recover(runId, {client})` or
   * `recover({runId, client})`. */
  async recover(runId, options) {
    if (typeof runId === 'object' && runId !== null && options === undefined) {
      options = runId;
      runId = options.runId;
    }
    if (typeof runId !== 'string') throw new TypeError('recover needs a runId (a string)');
    options = options ?? {};
    const p = prepare(options);
    let promise;
    const driver = newDriver();
    try {
      promise = this._native.recover(driver, runId, this._continueSpec(options, p), p.client, p.scripted, p.token, runStore(options, p));
    } catch (error) {
      p.release();
      throw decodeError(error);
    }
    queueMicrotask(() => pollRun(driver));
    return settleRun(promise, p);
  }

  _continueSpec(options, p) {
    return {
      toolOutputs: options.toolOutputs
        ? options.toolOutputs.map((o) => ({ toolCallId: o.toolCallId, output: argumentJson(o.output ?? null, `toolOutputs: output of tool call ${o.toolCallId}`) }))
        : undefined,
      context: options.context === undefined || options.context === null ? undefined : argumentJson(options.context, 'context'),
      options: {
        ...p.overrides,
        approvals: decisionSpecs(options.approvals ?? options.approveToolCalls),
        rejections: decisionSpecs(options.rejections ?? options.rejectToolCalls),
        humanInput: options.humanInput ?? undefined,
      },
      onEvent: p.onEvent,
      traceparent: tracing.currentTraceparent(),
    };
  }
}

const AGENT_KEYS = new Set(['id', 'model', 'instructions', 'tools', 'maxSteps', 'stopWhen', 'modelRetry', 'toolExecution',
  'temperature', 'maxOutputTokens', 'topP', 'outputSchema', 'requireApproval', 'humanReview', 'stateSecret',
  'toolChoice', 'parallelToolCalls', 'activeTools', 'models', 'preset', 'parseOutput', 'store', 'lease', 'mcpServers']);

function definitionError(message) {
  return new AgentDefinitionError(`Invalid agent definition: ${message}`, { code: 'definition_invalid' });
}

/** The agent's output validator: `parseOutput(text)` (the product's hook) first, then
 * `outputSchema` on what it returns. */
function outputSpec(definition) {
  const { parseOutput, outputSchema } = definition;
  if (parseOutput === undefined || parseOutput === null) return validatorSpec(outputSchema, false);
  if (typeof parseOutput !== 'function') throw definitionError('parseOutput must be a function (text) => output');
  const schema = validatorSpec(outputSchema, false);
  const check = schema === undefined ? null : schema.$callback !== undefined ? callables.get(schema.$callback).fn
    : jsonSchemaValidator(schema).parse;
  const parse = (text) => {
    if (typeof text !== 'string') throw new Error('parseOutput takes the final text');
    const parsed = parseOutput(text);
    if (check === null) return parsed;
    return thenOf(parsed) === undefined ? check(parsed) : Promise.resolve(parsed).then(check);
  };
  return callback(register(parse));
}

/** `stateSecret`: a string, or a list for rotation (the first signs, any verifies). */
function stateSecrets(secret) {
  if (secret === undefined || secret === null) return undefined;
  const list = typeof secret === 'string' ? [secret] : secret;
  if (!Array.isArray(list) || !list.every((s) => typeof s === 'string')) {
    throw new AgentDefinitionError('Invalid agent definition: stateSecret must be a string or an array of strings', { code: 'definition_invalid' });
  }
  return list;
}

/** Defines an agent (SPEC §3). */
function createAgent(definition) {
  for (const key of Object.keys(definition)) {
    if (!AGENT_KEYS.has(key)) throw new AgentDefinitionError(`Invalid agent definition: unknown key '${key}'`, { code: 'definition_invalid' });
  }
  const tools = (definition.tools ?? []).map((t) => (t[SPEC] ? t : defineTool(t)));
  const spec = {
    id: definition.id,
    tools: tools.map((t) => t[SPEC]),
    // `models` (the product's fallback list, or a function of the turn) and `preset` are
    // read by the core: `model` wins, then the first of `models`, then `@<preset>`.
    model: dynamicSpec(definition.model, 'Invalid agent definition: model'),
    models: dynamicSpec(definition.models, 'Invalid agent definition: models'),
    preset: definition.preset ?? undefined,
    instructions: dynamicSpec(definition.instructions, 'Invalid agent definition: instructions'),
    temperature: dynamicSpec(definition.temperature, 'Invalid agent definition: temperature'),
    maxOutputTokens: dynamicSpec(definition.maxOutputTokens, 'Invalid agent definition: maxOutputTokens'),
    topP: dynamicSpec(definition.topP, 'Invalid agent definition: topP'),
    maxSteps: definition.maxSteps ?? undefined,
    stopWhen: stopSpecs(definition.stopWhen),
    modelRetry: definition.modelRetry ?? undefined,
    toolExecution: definition.toolExecution ?? undefined,
    outputSchema: outputSpec(definition),
    requireApproval: typeof definition.requireApproval === 'function' ? callback(register(definition.requireApproval, true)) : undefined,
    humanReview: typeof definition.humanReview === 'function' ? callback(register(definition.humanReview)) : undefined,
    stateSecrets: stateSecrets(definition.stateSecret),
    toolChoice: dynamicSpec(definition.toolChoice, 'Invalid agent definition: toolChoice'),
    parallelToolCalls: checkedBoolean(definition.parallelToolCalls, 'Invalid agent definition: parallelToolCalls'),
    activeTools: dynamicSpec(definition.activeTools, 'Invalid agent definition: activeTools'),
    lease: leaseSpec(definition.lease),
    mcpServers: mcpServerSpecs(definition.mcpServers),
  };
  const store = definition.store === undefined || definition.store === null ? undefined : nativeStore(definition.store, 'store', null);
  const nativeAgent = nativeCall(() => new native.NativeAgent(spec, store));
  return new Agent({ ...definition, tools }, nativeAgent);
}

// ---------------------------------------------------------------------------------------
// MCP servers (SPEC §11)

const MCP = Symbol('phaseo.mcpServer');
/** Declares an MCP server: `{name, command, args, env, cwd}` (stdio: a child process) or
 * `{name, url, headers, bearerToken}` (Streamable HTTP), with `options` (SPEC §11). Give it
 * to an agent as `mcpServers: [...]`; it starts when a run first needs its tools. The core
 * checks the declaration here (every refusal names the server and the key). */
function createMcpServer(transport, options = {}) {
  if (transport === null || typeof transport !== 'object') {
    throw new TypeError('createMcpServer needs {name, command, args?, env?, cwd?} or {name, url, headers?, bearerToken?}');
  }
  if (options === null || typeof options !== 'object') {
    throw new AgentDefinitionError(`Invalid MCP server '${transport.name}': options must be an object`, { code: 'definition_invalid' });
  }
  const spec = { ...options, ...transport };
  const fn = (value, withRuntime = false) => (typeof value === 'function' ? callback(register(value, withRuntime)) : value);
  // The core wants a boolean: a JS predicate may answer any truthy value (or a Promise of one).
  const filter = options.filter;
  spec.filter = typeof filter === 'function' ? callback(register(async (tool) => Boolean(await filter(tool)))) : filter;
  spec.requireApproval = fn(options.requireApproval, true);
  spec.onElicitation = fn(options.onElicitation);
  nativeCall(() => native.checkMcpServer(spec));
  const server = { name: transport.name, transport: transport.command !== undefined ? 'stdio' : 'http' };
  Object.defineProperty(server, MCP, { value: spec });
  return Object.freeze(server);
}

function mcpServerSpecs(servers) {
  if (servers === undefined || servers === null) return undefined;
  if (!Array.isArray(servers) || !servers.every((s) => s !== null && typeof s === 'object' && s[MCP])) {
    throw definitionError('mcpServers must be an array of servers made by createMcpServer(...)');
  }
  return servers.map((s) => s[MCP]);
}

function leaseSpec(lease) {
  if (lease === undefined || lease === null) return undefined;
  if (typeof lease !== 'object') throw definitionError('lease must be an object {durationMs, renewEveryMs}');
  for (const key of Object.keys(lease)) {
    if (key !== 'durationMs' && key !== 'renewEveryMs') throw definitionError(`lease: unknown key '${key}'`);
  }
  return { durationMs: lease.durationMs ?? undefined, renewEveryMs: lease.renewEveryMs ?? undefined };
}

// ---------------------------------------------------------------------------------------
// Run stores (SPEC §10)

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

function isAgentGatewayError(error) {
  return error instanceof AgentGatewayError;
}

module.exports = {
  AgentCancelledError,
  AgentMcpError,
  errorClass,
  AgentContinueError,
  AgentDefinitionError,
  AgentError,
  AgentGatewayError,
  AgentLeaseLostError,
  AgentMaxStepsError,
  AgentModelError,
  AgentSchemaValidationError,
  AgentStateError,
  AgentStoreError,
  AgentStreamResult,
  AgentToolError,
  AgentToolTimeoutError,
  AgentUnknownToolError,
  STATE_VERSION: 1,
  RunStore,
  createAgent,
  createGatewayAgentClient,
  createInMemoryRunStore,
  createMcpServer,
  createOpenAICompatibleClient,
  createPostgresRunStore,
  createSqliteRunStore,
  createScriptedClient,
  createTestClient,
  defineTool,
  enableTracing: tracing.enableTracing,
  flushTracing: tracing.flushTracing,
  shutdownTracing: tracing.shutdownTracing,
  finishReasonIs,
  hasToolCall,
  isAgentGatewayError,
  jsonSchemaValidator,
  maxCost,
  maxDuration,
  maxTokensUsed,
  parseState,
  stepCountIs,
  tool,
};
