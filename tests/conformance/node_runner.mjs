#!/usr/bin/env node
// Node conformance runner: runs the cross-language JSON cases through the PUBLIC JavaScript
// API of the Node binding (bindings-node/index.js), with real JS executors, validators,
// predicates, hooks and a host model client (see tests/conformance/README.md and
// tests/conformance/README.md).
//
//   node tests/conformance/node_runner.mjs [--stop-after N --save-state DIR |
//       --resume-state DIR --from-step N] PATH...
//
// Executor forms: an `async function` by default, a plain function for `"async": false`, an
// `async function*` for `"asGenerator": true` (a `function*` when also `"async": false`).
//
// Entry points: a case whose file name sorts at an odd index among the `*.json` files of its
// folder runs its steps through `agent.stream(...)` / `agent.continueStream(...)` (awaiting the
// stream result, events still through onEvent); every other case uses `agent.run(...)` /
// `agent.continueRun(...)`.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const BINDING_DIR = path.resolve(HERE, '../../bindings-node');
const ADDON = path.join(BINDING_DIR, 'phaseo-agent.node');

// ---------------------------------------------------------------------------------------
// Keys this runner understands (anything else fails the case, naming the key)

const CASE_KEYS = new Set(['name', 'description', 'agent', 'tools', 'model', 'steps', 'expectDefinitionError']);
const AGENT_KEYS = new Set([
  'id', 'model', 'instructions', 'maxSteps', 'stopWhen', 'modelRetry', 'toolExecution',
  'temperature', 'maxOutputTokens', 'topP', 'outputSchema', 'requireApproval', 'humanReview',
  'stateSecret', 'toolChoice', 'parallelToolCalls', 'activeTools',
]);
const TOOL_KEYS = new Set([
  'id', 'description', 'asAgent', 'parameters', 'inputSchema', 'outputSchema', 'eventSchema', 'timeoutMs',
  'onError', 'requireApproval', 'nextTurnParams', 'manual', 'onToolCalled',
  'onResponseReceived', 'behavior', 'asGenerator', 'async', 'strict', 'inputExamples',
  'maxCalls', 'retry', 'deferLoading',
]);
const MODEL_ENTRY_KEYS = new Set(['text', 'toolCalls', 'usage', 'cost', 'finishReason', 'fail']);
const OVERRIDE_KEYS = [
  'model', 'maxSteps', 'stopWhen', 'modelRetry', 'toolExecution', 'temperature',
  'maxOutputTokens', 'topP', 'toolChoice', 'parallelToolCalls', 'activeTools',
];
const RUN_KEYS = new Set(['input', 'context', 'messages', 'cancelAfterMs', ...OVERRIDE_KEYS]);
const CONTINUE_KEYS = new Set([
  'approvals', 'rejections', 'toolOutputs', 'responses', 'humanInput', 'context', 'cancelAfterMs',
  ...OVERRIDE_KEYS,
]);
const STEP_KEYS = new Set(['run', 'continue', 'expect']);
const EXPECT_KEYS = new Set([
  'status', 'output', 'stopReason', 'pauseKind', 'context', 'error', 'pending', 'executed',
  'cancelled', 'maxConcurrent', 'modelRequests', 'events', 'toolEvents',
  'preliminaryResults', 'usage', 'minWallMs', 'maxWallMs',
]);
const ERROR_KEYS = new Set(['code', 'messageContains']);
const REQUEST_KEYS = new Set([
  'toolMessages', 'tools', 'context', 'temperature', 'model', 'instructions',
  'lastUserMessage', 'maxOutputTokens', 'topP', 'toolChoice', 'parallelToolCalls', 'toolSpecs',
  'toolCalls',
]);
const TOOL_SPEC_KEYS = new Set(['id', 'strict', 'inputExamples']);
const TOOL_MESSAGE_KEYS = new Set(['toolCallId', 'content', 'contentContains', 'isError']);
const USAGE_KEYS = new Set(['inputTokens', 'outputTokens', 'cachedTokens', 'totalTokens', 'cost']);
const TOOL_EXECUTION_KEYS = new Set(['toolConcurrency', 'onError', 'maxOutputChars', 'maxToolCalls']);
const RETRY_KEYS = new Set(['maxAttempts', 'backoffMs']);
const TOOL_CALL_KEYS = new Set(['id', 'name', 'arguments']);
const MODEL_RETRY_KEYS = new Set(['maxRetries', 'backoffMs']);
const DECISION_KEYS = new Set(['toolCallId', 'reason']);
const APPROVAL_KEYS = new Set(['toolCallId', 'reason', 'editedInput']);
const TOOL_OUTPUT_KEYS = new Set(['toolCallId', 'output']);
const TERMINAL_ACTIONS = new Set([
  'return', 'returnInput', 'throw', 'returnContext', 'returnRuntime', 'returnAttempt', 'returnIdempotencyKey',
]);
const ACTIONS = new Set([...TERMINAL_ACTIONS, 'progress', 'setContext', 'sleepMs', 'blockingSleepMs', 'throwUntilAttempt']);
const TOOL_EVENT_TYPES = new Set(['tool.started', 'tool.preliminary_result', 'tool.completed', 'tool.failed', 'tool.retrying']);
const EXECUTOR_GRACE_MS = 1000;

/** The first difference, or a feature of the case this runner cannot express. */
class CaseError extends Error {}

// ---------------------------------------------------------------------------------------
// JSON helpers (numbers by value, absent == null)

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const clone = (v) => (v === undefined ? undefined : structuredClone(v));

/** Deep equality where `2` equals `2.0` and an absent object key equals `null`. */
function jsonEq(a, b) {
  if (a === undefined) a = null;
  if (b === undefined) b = null;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEq(x, b[i]));
  }
  if (isObject(a) || isObject(b)) {
    if (!isObject(a) || !isObject(b)) return false;
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) if (!jsonEq(a[k], b[k])) return false;
    return true;
  }
  // An integer beyond 2^53 is a BigInt on either side (numbers by value).
  const numeric = (x) => typeof x === 'number' || typeof x === 'bigint';
  if (numeric(a) && numeric(b) && (typeof a === 'bigint' || typeof b === 'bigint')) return a == b; // eslint-disable-line eqeqeq
  return a === b;
}

/** Compact JSON text of a value for difference messages (cut at 300 characters). */
function show(value) {
  let s;
  try {
    s = exactJson.toJson(value === undefined ? null : value);
  } catch {
    s = String(value);
  }
  const chars = Array.from(s);
  return chars.length <= 300 ? s : `${chars.slice(0, 300).join('')}…`;
}

/** A string verbatim, anything else as compact JSON. */
const text = (v) => (typeof v === 'string' ? v : exactJson.toJson(v));

function diff(key, expected, actual) {
  if (!jsonEq(expected, actual)) throw new CaseError(`${key}: expected ${show(expected)}, got ${show(actual)}`);
}

function checkKeys(obj, allowed, what) {
  if (!isObject(obj)) return;
  for (const key of Object.keys(obj)) {
    if (!allowed.has(key)) throw new CaseError(`${what}: unsupported key ${JSON.stringify(key)}`);
  }
}

function singleEntry(action, what) {
  if (!isObject(action) || Object.keys(action).length !== 1) {
    throw new CaseError(`${what} must be an object with one key: ${show(action)}`);
  }
  return Object.entries(action)[0];
}

/** A behaviour action as `[key, argument]`; `throwUntilAttempt` alone has a second key,
 * `message`, and takes `[n, message]` as its argument. */
function behaviorAction(action) {
  if (isObject(action) && 'throwUntilAttempt' in action) {
    const keys = Object.keys(action).sort();
    if (keys.length !== 2 || keys[0] !== 'message' || keys[1] !== 'throwUntilAttempt') {
      throw new CaseError(`behavior action throwUntilAttempt needs exactly a message: ${show(action)}`);
    }
    return ['throwUntilAttempt', [action.throwUntilAttempt, action.message]];
  }
  return singleEntry(action, 'behavior action');
}

// ---------------------------------------------------------------------------------------
// What executors record during one step

class Observations {
  constructor() {
    this.executed = [];
    this.cancelled = [];
    this.running = 0;
    this.maxRunning = 0;
    this.active = 0;
  }

  reset() {
    this.executed = [];
    this.cancelled = [];
    this.maxRunning = 0;
  }

  /** An executor's first action. */
  start(callId) {
    this.executed.push(callId);
    this.active += 1;
    this.running += 1;
    this.maxRunning = Math.max(this.maxRunning, this.running);
  }

  /** An executor returned or threw. */
  end() {
    this.running -= 1;
    this.active -= 1;
  }

  recordCancelled(callId) {
    this.cancelled.push(callId);
  }

  snapshot() {
    return {
      executed: [...this.executed].sort(),
      cancelled: [...new Set(this.cancelled)].sort(),
      maxConcurrent: this.maxRunning,
    };
  }
}

// ---------------------------------------------------------------------------------------
// Tool executors: the case's behaviour as real JS functions

function runtimeValue(context) {
  const runId = context.runId;
  if (typeof runId !== 'string' || runId === '') {
    throw new Error(`runtime run id is not a non-empty string: ${show(runId)}`);
  }
  return {
    runId: '<run>',
    agentId: context.agentId,
    stepIndex: context.stepIndex,
    toolCallId: context.toolCall.id,
  };
}

/** The context's idempotency key, checked to start with the real run id and `:`, with that
 * run id written as `<run>`. */
function idempotencyKey(context) {
  const { idempotencyKey: key, runId } = context;
  if (typeof runId !== 'string' || runId === '' || typeof key !== 'string' || !key.startsWith(`${runId}:`)) {
    throw new Error(`idempotency key ${show(key)} does not start with the run id ${show(runId)}`);
  }
  return `<run>${key.slice(runId.length)}`;
}

/** The value a terminal action returns (or the error it throws). */
function terminal(key, arg, input, context) {
  switch (key) {
    case 'returnAttempt': return context.attempt;
    case 'returnIdempotencyKey': return idempotencyKey(context);
    case 'return': return clone(arg);
    case 'returnInput': return input;
    case 'throw': throw new Error(text(arg));
    case 'returnContext': return context.context;
    default: return runtimeValue(context);
  }
}

/** A synchronous sleep: blocks the (only) JS thread, ignoring cancellation. */
function blockingSleep(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(ms));
}

/** A cooperative wait that ends early when the call's signal aborts (then records the call
 * as cancelled and throws). */
function cooperativeSleep(ms, context, obs) {
  const callId = context.toolCall.id;
  const signal = context.signal;
  return new Promise((resolve, reject) => {
    const cancelled = () => {
      obs.recordCancelled(callId);
      reject(new Error('cancelled'));
    };
    if (signal.aborted) { cancelled(); return; }
    const onAbort = () => { clearTimeout(timer); cancelled(); };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, Number(ms));
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** The side-effect actions every executor form performs alike; false for the others. */
function sideEffect(key, arg, context) {
  if (key === 'setContext') context.setContext(clone(arg));
  else if (key === 'throwUntilAttempt') {
    const [until, message] = arg;
    if (context.attempt < until) throw new Error(text(message));
  } else if (key === 'blockingSleepMs') blockingSleep(arg);
  else return false;
  return true;
}

function asyncExecutor(actions, obs) {
  return async function execute(input, context) {
    obs.start(context.toolCall.id);
    try {
      for (const [key, arg] of actions) {
        if (TERMINAL_ACTIONS.has(key)) return terminal(key, arg, input, context);
        if (key === 'progress') context.emitProgress(clone(arg));
        else if (key === 'sleepMs') await cooperativeSleep(arg, context, obs);
        else sideEffect(key, arg, context);
      }
      return null;
    } finally {
      obs.end();
    }
  };
}

function syncExecutor(actions, obs) {
  return function execute(input, context) {
    obs.start(context.toolCall.id);
    try {
      for (const [key, arg] of actions) {
        if (TERMINAL_ACTIONS.has(key)) return terminal(key, arg, input, context);
        if (key === 'progress') context.emitProgress(clone(arg));
        else sideEffect(key, arg, context);
      }
      return null;
    } finally {
      obs.end();
    }
  };
}

function asyncGeneratorExecutor(actions, obs) {
  return async function* execute(input, context) {
    obs.start(context.toolCall.id);
    try {
      for (const [key, arg] of actions) {
        if (TERMINAL_ACTIONS.has(key)) return terminal(key, arg, input, context);
        if (key === 'progress') yield clone(arg);
        else if (key === 'sleepMs') await cooperativeSleep(arg, context, obs);
        else sideEffect(key, arg, context);
      }
      return null;
    } finally {
      obs.end();
    }
  };
}

function syncGeneratorExecutor(actions, obs) {
  return function* execute(input, context) {
    obs.start(context.toolCall.id);
    try {
      for (const [key, arg] of actions) {
        if (TERMINAL_ACTIONS.has(key)) return terminal(key, arg, input, context);
        if (key === 'progress') yield clone(arg);
        else sideEffect(key, arg, context);
      }
      return null;
    } finally {
      obs.end();
    }
  };
}

/** The executor form the tool's flags ask for. */
function executor(spec, obs) {
  const actions = (spec.behavior ?? []).map(behaviorAction);
  const sync = spec.async === false;
  const generator = spec.asGenerator === true;
  for (const [key] of actions) {
    if (!ACTIONS.has(key)) {
      throw new CaseError(`tool ${JSON.stringify(spec.id)}: unsupported behavior action ${JSON.stringify(key)}`);
    }
    if (key === 'sleepMs' && sync) {
      // A synchronous JS function cannot wait cooperatively: the abort that would end the
      // wait is delivered on the very thread the wait blocks.
      throw new CaseError(`tool ${JSON.stringify(spec.id)}: "sleepMs" in a synchronous ("async": false) executor cannot observe cancellation in Node`);
    }
  }
  if (generator) return sync ? syncGeneratorExecutor(actions, obs) : asyncGeneratorExecutor(actions, obs);
  return sync ? syncExecutor(actions, obs) : asyncExecutor(actions, obs);
}

// ---------------------------------------------------------------------------------------
// Validators, predicates and hooks as host callables

let sdk; // the binding's public API, loaded in main()
// The binding's JSON reader and writer that keep integers beyond 2^53 exact (as BigInt):
// case files, saved states and edited states hold such integers, which JSON.parse rounds.
let exactJson;

/** A host-native validator (an object with `safeParse`) backed by the binding's public JSON
 * Schema helper. */
function schemaValidator(schema) {
  const check = sdk.jsonSchemaValidator(schema);
  return {
    safeParse(value) {
      return check.safeParse(value);
    },
  };
}

function inputEquals(expected, input) {
  return isObject(input) && Object.entries(expected).every(([k, v]) => k in input && jsonEq(input[k], v));
}

function toolApproval(rule) {
  if (rule === undefined || rule === null || typeof rule === 'boolean') return rule ?? undefined;
  if (!isObject(rule) || Object.keys(rule).length !== 1 || !isObject(rule.inputEquals)) {
    throw new CaseError(`tool requireApproval: unsupported rule ${show(rule)}`);
  }
  const expected = rule.inputEquals;
  return (input, _context) => inputEquals(expected, input);
}

function agentApproval(rule) {
  const [key, arg] = singleEntry(rule, 'agent requireApproval');
  if (key === 'toolIds' && Array.isArray(arg)) return (call, _context) => arg.includes(call.name);
  if (key === 'inputEquals' && isObject(arg)) return (call, _context) => inputEquals(arg, call.input);
  throw new CaseError(`agent requireApproval: unsupported rule ${show(rule)}`);
}

function onToolCalled(form) {
  if (form === undefined || form === null) return undefined;
  if (form === 'pause') return (_input, _context) => null;
  if (isObject(form) && Object.keys(form).length === 1 && 'return' in form) {
    const value = form.return;
    return (_input, _context) => clone(value);
  }
  throw new CaseError(`onToolCalled: unsupported form ${show(form)}`);
}

function onResponseReceived(form) {
  if (form === undefined || form === null) return undefined;
  if (isObject(form) && Object.keys(form).length === 1 && typeof form.wrap === 'string') {
    const key = form.wrap;
    return (output, _context) => ({ [key]: output });
  }
  throw new CaseError(`onResponseReceived: unsupported form ${show(form)}`);
}

function humanReview(form) {
  if (!isObject(form) || Object.keys(form).length !== 1 || !('pauseOnFinal' in form)) {
    throw new CaseError(`humanReview: unsupported form ${show(form)}`);
  }
  const spec = form.pauseOnFinal ?? {};
  checkKeys(spec, new Set(['reason', 'payload']), 'humanReview.pauseOnFinal');
  return (ctx) => {
    const users = (ctx.messages ?? []).filter((m) => m.role === 'user').length;
    if (ctx.isFinal === true && users === 1) {
      return { reason: spec.reason ?? '', payload: clone(spec.payload) ?? null };
    }
    return null;
  };
}

function stopConditions(value) {
  if (value === undefined || value === null) return undefined;
  const items = Array.isArray(value) ? value : [value];
  return items.map((item) => {
    const [key, arg] = singleEntry(item, 'stopWhen condition');
    switch (key) {
      case 'stepCountIs': return sdk.stepCountIs(Number(arg));
      case 'maxTokensUsed': return sdk.maxTokensUsed(Number(arg));
      case 'maxCost': return sdk.maxCost(Number(arg));
      case 'maxDuration': return sdk.maxDuration(Number(arg));
      case 'hasToolCall': return sdk.hasToolCall(text(arg));
      case 'finishReasonIs': return sdk.finishReasonIs(text(arg));
      default: throw new CaseError(`stopWhen: unsupported condition ${JSON.stringify(key)}`);
    }
  });
}

function toolExecution(value) {
  if (value === undefined || value === null) return undefined;
  checkKeys(value, TOOL_EXECUTION_KEYS, 'toolExecution');
  return clone(value);
}

function toolRetry(value) {
  if (value === undefined || value === null) return undefined;
  checkKeys(value, RETRY_KEYS, 'retry');
  return clone(value);
}

function modelRetry(value) {
  if (value === undefined || value === null) return undefined;
  checkKeys(value, MODEL_RETRY_KEYS, 'modelRetry');
  return clone(value);
}

// ---------------------------------------------------------------------------------------
// The agent

function optionalValidator(spec, key) {
  return spec[key] !== undefined && spec[key] !== null ? schemaValidator(spec[key]) : undefined;
}

function buildTool(spec, obs) {
  checkKeys(spec, TOOL_KEYS, 'tool');
  if (typeof spec.id !== 'string') throw new CaseError('tool without id');
  const definition = {
    id: spec.id,
    description: spec.description ?? '',
    parameters: clone(spec.parameters),
    execute: spec.manual === true ? false : executor(spec, obs),
    timeoutMs: spec.timeoutMs ?? undefined,
    requireApproval: toolApproval(spec.requireApproval),
    onError: spec.onError ?? undefined,
    inputSchema: optionalValidator(spec, 'inputSchema'),
    outputSchema: optionalValidator(spec, 'outputSchema'),
    eventSchema: optionalValidator(spec, 'eventSchema'),
    onToolCalled: onToolCalled(spec.onToolCalled),
    onResponseReceived: onResponseReceived(spec.onResponseReceived),
    nextTurnParams: clone(spec.nextTurnParams ?? undefined),
    strict: spec.strict ?? undefined,
    inputExamples: clone(spec.inputExamples ?? undefined),
    maxCalls: spec.maxCalls ?? undefined,
    retry: toolRetry(spec.retry),
    deferLoading: spec.deferLoading ?? undefined,
  };
  for (const k of Object.keys(definition)) if (definition[k] === undefined) delete definition[k];
  return sdk.defineTool(definition);
}

/** `{id, description?, asAgent: {agent, tools}}`: the nested agent built like the case's
 * own and registered with `asTool` (docs/behaviour.md §18). */
function agentTool(spec, obs) {
  checkKeys(spec, new Set(['id', 'description', 'asAgent']), 'tool');
  checkKeys(spec.asAgent, new Set(['agent', 'tools']), 'asAgent');
  const nested = buildAgent(spec.asAgent, obs);
  if (nested instanceof Error) throw nested;
  const options = {};
  if (spec.id !== undefined) options.id = spec.id;
  if (spec.description !== undefined) options.description = spec.description;
  return nested.asTool(options);
}

function buildAgent(caseDoc, obs) {
  const a = caseDoc.agent;
  if (!isObject(a)) throw new CaseError('case without agent');
  checkKeys(a, AGENT_KEYS, 'agent');
  let tools;
  try {
    tools = (caseDoc.tools ?? []).map((t) => (isObject(t) && t.asAgent !== undefined ? agentTool(t, obs) : buildTool(t, obs)));
  } catch (e) {
    if (e instanceof sdk.AgentError) return e;
    throw e;
  }
  const definition = {
    id: a.id,
    tools,
    toolChoice: clone(a.toolChoice ?? undefined),
    parallelToolCalls: a.parallelToolCalls ?? undefined,
    activeTools: clone(a.activeTools ?? undefined),
    model: a.model ?? undefined,
    instructions: a.instructions ?? undefined,
    maxSteps: a.maxSteps ?? undefined,
    temperature: a.temperature ?? undefined,
    maxOutputTokens: a.maxOutputTokens ?? undefined,
    topP: a.topP ?? undefined,
    stopWhen: stopConditions(a.stopWhen),
    modelRetry: modelRetry(a.modelRetry),
    toolExecution: toolExecution(a.toolExecution),
    outputSchema: optionalValidator(a, 'outputSchema'),
    requireApproval: a.requireApproval != null ? agentApproval(a.requireApproval) : undefined,
    humanReview: a.humanReview != null ? humanReview(a.humanReview) : undefined,
    stateSecret: a.stateSecret ?? undefined,
  };
  for (const k of Object.keys(definition)) if (definition[k] === undefined) delete definition[k];
  try {
    return sdk.createAgent(definition);
  } catch (e) {
    // The binding refused the definition: the case may expect that (expectDefinitionError).
    if (e instanceof sdk.AgentError) return e;
    throw e;
  }
}

function checkDefinitionError(want, built) {
  if (!(built instanceof sdk.AgentError)) {
    throw new CaseError(`expectDefinitionError: expected ${show(want)}, but the definition was accepted`);
  }
  if ('code' in want && !jsonEq(want.code, built.code)) {
    throw new CaseError(`expectDefinitionError.code: expected ${show(want.code)}, got ${show(built.code)} (message: ${built.message})`);
  }
  if (typeof want.messageContains === 'string' && !built.message.includes(want.messageContains)) {
    throw new CaseError(`expectDefinitionError.message: expected to contain ${JSON.stringify(want.messageContains)}, got ${JSON.stringify(built.message)}`);
  }
}

// ---------------------------------------------------------------------------------------
// The scripted model: a host model client recording every request

function requestSummary(request) {
  const messages = request.messages ?? [];
  let start = messages.length;
  while (start > 0 && messages[start - 1].role === 'tool') start -= 1;
  const users = messages.filter((m) => m.role === 'user');
  // The last assistant message with tool calls, as the model will read it.
  const withCalls = messages.filter((m) => Array.isArray(m.toolCalls) && m.toolCalls.length > 0);
  const calls = withCalls.length ? withCalls[withCalls.length - 1].toolCalls : [];
  return {
    // Not cloned: arguments may hold BigInts, which JSON.stringify refuses.
    toolCalls: calls.map((c) => ({ id: c.id, name: c.name, arguments: c.input ?? null })),
    toolMessages: messages.slice(start).map((m) => ({
      toolCallId: m.toolCallId ?? null,
      content: m.content,
      isError: m.isError === true,
    })),
    tools: (request.tools ?? []).map((t) => t.id),
    context: clone(request.context ?? null),
    temperature: request.temperature ?? null,
    model: request.model ?? null,
    instructions: request.instructions ?? null,
    lastUserMessage: users.length ? users[users.length - 1].content : null,
    maxOutputTokens: request.maxOutputTokens ?? null,
    topP: request.topP ?? null,
    toolChoice: clone(request.toolChoice ?? null),
    parallelToolCalls: request.parallelToolCalls ?? null,
    toolSpecs: (request.tools ?? []).map((t) => ({
      id: t.id,
      strict: t.strict === true,
      inputExamples: clone(t.inputExamples ?? null),
    })),
  };
}

/** Answers with the case's entries in order, one per attempt. */
class ScriptedModel {
  constructor(entries, cursor) {
    this.entries = entries;
    this.cursor = cursor;
    this.requests = [];
    this.ranOut = null;
  }

  async generate(request) {
    this.requests.push(requestSummary(request));
    const index = this.cursor;
    this.cursor += 1;
    if (index >= this.entries.length) {
      this.ranOut = `case error: the scripted model ran out of responses (${this.entries.length} scripted)`;
      throw new Error(this.ranOut);
    }
    const entry = this.entries[index];
    if (entry.fail !== undefined) {
      const failure = entry.fail;
      throw new Error(isObject(failure) ? String(failure.message ?? '') : text(failure));
    }
    return clone(entry);
  }
}

// ---------------------------------------------------------------------------------------
// Steps

function overrideOptions(spec) {
  const options = {
    model: spec.model ?? undefined,
    maxSteps: spec.maxSteps ?? undefined,
    stopWhen: stopConditions(spec.stopWhen),
    modelRetry: modelRetry(spec.modelRetry),
    toolExecution: toolExecution(spec.toolExecution),
    temperature: spec.temperature ?? undefined,
    maxOutputTokens: spec.maxOutputTokens ?? undefined,
    topP: spec.topP ?? undefined,
    toolChoice: clone(spec.toolChoice ?? undefined),
    parallelToolCalls: spec.parallelToolCalls ?? undefined,
    activeTools: clone(spec.activeTools ?? undefined),
  };
  for (const k of Object.keys(options)) if (options[k] === undefined) delete options[k];
  return options;
}

/** Approvals (`keys` with `editedInput`) or rejections. */
function decisions(items, what, keys) {
  if (items === undefined || items === null) return undefined;
  if (!Array.isArray(items)) throw new CaseError(`${what}: expected a list, got ${show(items)}`);
  return items.map((d) => {
    if (typeof d === 'string') return d;
    if (isObject(d) && typeof d.toolCallId === 'string') {
      checkKeys(d, keys, what);
      const decision = { toolCallId: d.toolCallId };
      if (d.reason !== undefined) decision.reason = d.reason;
      if (d.editedInput !== undefined) decision.editedInput = clone(d.editedInput);
      return decision;
    }
    throw new CaseError(`${what}: unsupported decision ${show(d)}`);
  });
}

/** `toolOutputs` or `responses` (named `what`). */
function toolOutputs(items, what = 'toolOutputs') {
  if (items === undefined || items === null) return undefined;
  if (!Array.isArray(items)) throw new CaseError(`${what}: expected a list, got ${show(items)}`);
  return items.map((o) => {
    checkKeys(o, TOOL_OUTPUT_KEYS, 'toolOutput');
    if (!isObject(o) || typeof o.toolCallId !== 'string') throw new CaseError(`toolOutput without toolCallId: ${show(o)}`);
    return { toolCallId: o.toolCallId, output: clone(o.output ?? null) };
  });
}

function collectSorted(dir) {
  return fs.readdirSync(dir).filter((n) => n.endsWith('.json')).sort();
}

/** Deterministic: the case's file name sorts at an odd index in its folder. */
function usesStream(file) {
  const abs = path.resolve(file);
  const siblings = collectSorted(path.dirname(abs));
  return siblings.indexOf(path.basename(abs)) % 2 === 1;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

class CaseRun {
  constructor(agent, model, obs, state, streaming) {
    this.agent = agent;
    this.model = model;
    this.obs = obs;
    this.state = state;
    this.streaming = streaming;
  }

  /** Starts the step's call; returns a Promise of the result (rejecting on error). */
  start(step, onEvent, signal) {
    const common = { client: this.model, onEvent, signal };
    if (step.run !== undefined) {
      const spec = step.run;
      if (!isObject(spec)) throw new CaseError('run: expected an object');
      const options = { ...overrideOptions(spec), input: clone(spec.input ?? null), ...common };
      if (spec.context !== undefined) options.context = clone(spec.context);
      if (spec.messages !== undefined && spec.messages !== null) options.messages = clone(spec.messages);
      return { promise: this.call('run', 'stream', options), cancelAfter: spec.cancelAfterMs };
    }
    if (step.continue !== undefined) {
      const spec = step.continue;
      if (!isObject(spec)) throw new CaseError('continue: expected an object');
      if (this.state === null) throw new CaseError('continue without a state');
      const options = { ...overrideOptions(spec), state: this.state, ...common };
      const approvals = decisions(spec.approvals, 'approvals', APPROVAL_KEYS);
      const rejections = decisions(spec.rejections, 'rejections', DECISION_KEYS);
      const outputs = toolOutputs(spec.toolOutputs);
      const responses = toolOutputs(spec.responses, 'responses');
      if (approvals !== undefined) options.approvals = approvals;
      if (rejections !== undefined) options.rejections = rejections;
      if (outputs !== undefined) options.toolOutputs = outputs;
      if (responses !== undefined) options.responses = responses;
      if (spec.humanInput !== undefined && spec.humanInput !== null) options.humanInput = spec.humanInput;
      if (spec.context !== undefined) options.context = clone(spec.context);
      return { promise: this.call('continueRun', 'continueStream', options), cancelAfter: spec.cancelAfterMs };
    }
    throw new CaseError('a step is neither run nor continue');
  }

  /** `agent.run`/`continueRun`, or the stream form awaited for its result. */
  call(method, streamMethod, options) {
    if (!this.streaming) return this.agent[method](options);
    try {
      const stream = this.agent[streamMethod](options);
      return Promise.resolve(stream);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async step(step) {
    this.obs.reset();
    this.model.requests = [];
    const events = [];
    const onEvent = (e) => { events.push(e); };
    const controller = new AbortController();
    const started = performance.now();
    const { promise, cancelAfter } = this.start(step, onEvent, controller.signal);
    let timer = null;
    if (cancelAfter !== undefined && cancelAfter !== null) {
      timer = setTimeout(() => controller.abort(), Number(cancelAfter));
    }
    let result = null;
    let error = null;
    try {
      result = await promise;
    } catch (e) {
      if (!(e instanceof sdk.AgentError)) throw e;
      error = e;
      result = e.result ?? null;
    } finally {
      if (timer !== null) clearTimeout(timer);
    }
    const wallMs = performance.now() - started;
    // Let executors the run stopped waiting for observe their cancellation.
    const deadline = performance.now() + EXECUTOR_GRACE_MS;
    while (this.obs.active > 0 && performance.now() < deadline) await sleep(5);
    if (this.model.ranOut) throw new CaseError(this.model.ranOut);
    // Between steps the state always round-trips through its canonical JSON text.
    if (result !== null && result !== undefined) this.state = sdk.parseState(stateJson(result));
    return {
      state: typeof this.state === 'string' ? null : this.state,
      error,
      events: [...events],
      requests: [...this.model.requests],
      ...this.obs.snapshot(),
      wallMs,
    };
  }
}

// ---------------------------------------------------------------------------------------
// Expectations

function toolMessageMatches(expected, actual) {
  if (!jsonEq(expected.toolCallId, actual.toolCallId)) return false;
  if ((expected.isError === true) !== (actual.isError === true)) return false;
  const content = typeof actual.content === 'string' ? actual.content : '';
  if ('content' in expected) {
    let parsed;
    try {
      parsed = JSON.parse(content);
    } catch {
      parsed = content;
    }
    if (!jsonEq(expected.content, parsed)) return false;
  }
  if (typeof expected.contentContains === 'string' && !content.includes(expected.contentContains)) return false;
  return true;
}

function checkRequest(i, expected, actual) {
  for (const [key, want] of Object.entries(expected)) {
    const got = actual[key];
    if (key === 'toolMessages') {
      const wantList = want ?? [];
      const gotList = got ?? [];
      if (wantList.length !== gotList.length || !wantList.every((w, j) => toolMessageMatches(w, gotList[j]))) {
        throw new CaseError(`modelRequests[${i}].toolMessages: expected ${show(wantList)}, got ${show(gotList)}`);
      }
    } else if (key === 'toolSpecs') {
      const wantList = want ?? [];
      const gotList = got ?? [];
      const same = wantList.length === gotList.length && wantList.every((w, j) =>
        Object.entries(w).every(([k, v]) => TOOL_SPEC_KEYS.has(k) && jsonEq(v, gotList[j][k] ?? null)));
      if (!same) throw new CaseError(`modelRequests[${i}].toolSpecs: expected ${show(wantList)}, got ${show(gotList)}`);
    } else if (key === 'toolCalls') {
      const wantList = want ?? [];
      const gotList = got ?? [];
      const same = wantList.length === gotList.length && wantList.every((w, j) =>
        Object.keys(w).every((k) => TOOL_CALL_KEYS.has(k))
        && jsonEq(w.id, gotList[j].id) && jsonEq(w.name, gotList[j].name)
        && jsonEq(asJson(w.arguments), asJson(gotList[j].arguments)));
      if (!same) throw new CaseError(`modelRequests[${i}].toolCalls: expected ${show(wantList)}, got ${show(gotList)}`);
    } else {
      diff(`modelRequests[${i}].${key}`, want, got);
    }
  }
}

/** Arguments compared as JSON: a string holding JSON stands for that JSON. */
function asJson(value) {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

function checkError(want, o) {
  const runError = o.state?.run?.error;
  let code;
  let message;
  if (o.error !== null) {
    code = o.error.code;
    message = String(o.error.message ?? '');
  } else if (isObject(runError)) {
    code = runError.code;
    message = String(runError.message ?? '');
  } else {
    throw new CaseError(`error: expected ${show(want)}, got no error`);
  }
  if ('code' in want && !jsonEq(want.code, code)) {
    throw new CaseError(`error.code: expected ${show(want.code)}, got ${show(code)} (message: ${message})`);
  }
  if (typeof want.messageContains === 'string' && !message.includes(want.messageContains)) {
    throw new CaseError(`error.message: expected to contain ${JSON.stringify(want.messageContains)}, got ${JSON.stringify(message)}`);
  }
}

function eventsByCall(events, types, pick) {
  const out = new Map();
  for (const e of events) {
    if (!types.has(e.type)) continue;
    const id = String(e.toolCallId);
    if (!out.has(id)) out.set(id, []);
    out.get(id).push(pick(e));
  }
  return out;
}

function stateFields(state) {
  if (state === null || state === undefined) return {};
  const run = state.run ?? {};
  const pause = run.pause;
  return {
    status: run.status,
    output: state.output,
    stopReason: run.stopReason,
    pauseKind: isObject(pause) ? pause.kind : null,
    context: run.context,
    pending: (isObject(pause) ? pause.pendingToolCalls ?? [] : []).map((p) => ({
      toolCallId: p.call?.id ?? null,
      toolName: p.call?.name ?? null,
      kind: p.kind ?? null,
    })),
  };
}

/** Checks every key of `expect`; the first difference throws. */
function checkExpect(expect, o) {
  const fields = stateFields(o.state);
  for (const [key, want] of Object.entries(expect)) {
    switch (key) {
      case 'status': case 'output': case 'stopReason': case 'pauseKind': case 'context': case 'pending':
        diff(key, want, fields[key]);
        break;
      case 'error':
        checkError(want, o);
        break;
      case 'executed': diff(key, want, o.executed); break;
      case 'cancelled': diff(key, want, o.cancelled); break;
      case 'maxConcurrent': diff(key, want, o.maxConcurrent); break;
      case 'modelRequests':
        if (want.length !== o.requests.length) {
          throw new CaseError(`modelRequests: expected ${want.length} requests, got ${o.requests.length}`);
        }
        want.forEach((w, i) => checkRequest(i, w, o.requests[i]));
        break;
      case 'events':
        diff(key, want, o.events.map((e) => e.type).filter((t) => !String(t).startsWith('response.')));
        break;
      case 'toolEvents': {
        const got = eventsByCall(o.events, TOOL_EVENT_TYPES, (e) => e.type);
        for (const [id, types] of Object.entries(want)) diff(`toolEvents.${id}`, types, got.get(id) ?? []);
        break;
      }
      case 'preliminaryResults': {
        const got = eventsByCall(o.events, new Set(['tool.preliminary_result']), (e) => e.result);
        for (const [id, values] of Object.entries(want)) diff(`preliminaryResults.${id}`, values, got.get(id) ?? []);
        break;
      }
      case 'usage': {
        const usage = o.state?.usage ?? null;
        for (const [k, v] of Object.entries(want)) diff(`usage.${k}`, v, usage === null ? null : usage[k]);
        break;
      }
      case 'minWallMs':
        if (o.wallMs < Number(want)) throw new CaseError(`minWallMs: took ${Math.round(o.wallMs)} ms, at least ${want} ms expected`);
        break;
      case 'maxWallMs':
        if (o.wallMs > Number(want)) throw new CaseError(`maxWallMs: took ${Math.round(o.wallMs)} ms, limit ${want} ms`);
        break;
      default:
        throw new CaseError(`expect: unsupported key ${JSON.stringify(key)}`);
    }
  }
  if (o.error !== null && !('error' in expect)) {
    throw new CaseError(`unexpected error ${o.error.code}: ${o.error.message}`);
  }
}

// ---------------------------------------------------------------------------------------
// Cases

/** Refuses, before anything runs, a case using a key this runner does not know. */
function checkCase(caseDoc) {
  checkKeys(caseDoc, CASE_KEYS, 'case');
  checkKeys(caseDoc.agent, AGENT_KEYS, 'agent');
  for (const t of caseDoc.tools ?? []) checkKeys(t, TOOL_KEYS, 'tool');
  for (const entry of caseDoc.model ?? []) {
    checkKeys(entry, MODEL_ENTRY_KEYS, 'model entry');
    for (const c of entry?.toolCalls ?? []) checkKeys(c, new Set(['id', 'name', 'arguments']), 'model entry toolCalls');
  }
  (caseDoc.steps ?? []).forEach((step, i) => {
    if (isObject(step) && step.editState !== undefined) {
      checkKeys(step, new Set(['editState']), `step ${i}`);
      return;
    }
    checkKeys(step, STEP_KEYS, `step ${i}`);
    checkKeys(step.run, RUN_KEYS, `step ${i}: run`);
    checkKeys(step.continue, CONTINUE_KEYS, `step ${i}: continue`);
    const expect = step.expect ?? {};
    checkKeys(expect, EXPECT_KEYS, `step ${i}: expect`);
    checkKeys(expect.error, ERROR_KEYS, `step ${i}: expect.error`);
    checkKeys(expect.usage, USAGE_KEYS, `step ${i}: expect.usage`);
    for (const request of expect.modelRequests ?? []) {
      checkKeys(request, REQUEST_KEYS, `step ${i}: expect.modelRequests`);
      for (const m of request.toolMessages ?? []) checkKeys(m, TOOL_MESSAGE_KEYS, `step ${i}: expect.modelRequests.toolMessages`);
    }
  });
}

/**
 * The `editState` step: RFC 6902 `add`/`remove`/`replace` on the state's JSON text, as an
 * attacker editing a stored state would.
 */
function jsonPatch(text, ops) {
  let doc = exactJson.parseJson(text);
  if (!Array.isArray(ops)) throw new CaseError('editState must be a list of operations');
  for (const op of ops) {
    checkKeys(op, new Set(['op', 'path', 'value']), 'editState');
    const { op: kind, path: at } = op;
    if (at === '' && (kind === 'add' || kind === 'replace')) { doc = op.value; continue; }
    if (typeof at !== 'string' || !at.startsWith('/')) throw new CaseError(`editState: bad path ${JSON.stringify(at)}`);
    const parts = at.slice(1).split('/').map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
    const key = parts.pop();
    let target = doc;
    for (const p of parts) {
      target = target?.[Array.isArray(target) ? Number(p) : p];
    }
    if (target === null || typeof target !== 'object') throw new CaseError(`editState: no such path ${JSON.stringify(at)}`);
    const index = Array.isArray(target) ? (key === '-' ? target.length : Number(key)) : key;
    const present = Array.isArray(target) ? index < target.length : Object.hasOwn(target, key);
    if (kind === 'add') {
      if (Array.isArray(target)) target.splice(index, 0, op.value); else target[key] = op.value;
    } else if (kind === 'remove' || kind === 'replace') {
      if (!present) throw new CaseError(`editState: no such path ${JSON.stringify(at)}`);
      if (kind === 'replace') target[index] = op.value;
      else if (Array.isArray(target)) target.splice(index, 1);
      else delete target[key];
    } else {
      throw new CaseError(`editState: unsupported op ${JSON.stringify(kind)}`);
    }
  }
  return exactJson.toJson(doc);
}

function loadSaved(file) {
  const doc = exactJson.parseJson(fs.readFileSync(file, 'utf8'));
  let state;
  try {
    state = sdk.parseState(exactJson.toJson(doc.state ?? null));
  } catch (e) {
    if (e instanceof sdk.AgentError) throw new CaseError(`saved state refused: ${e.code}: ${e.message}`);
    throw e;
  }
  return { state, cursor: Number(doc.modelCursor ?? 0) };
}

/** The JSON text of a state (a result, a parsed state object, or its text), digits kept:
 * a result holding BigInts writes itself as a JSON string on a Node without
 * JSON.rawJSON, and a plain object holding them needs the exact writer. */
function stateJson(state) {
  if (typeof state === 'string') return state;
  let text;
  try {
    text = JSON.stringify(state);
  } catch {
    text = exactJson.writeExact(state, exactJson.MAX_STATE_DEPTH);
  }
  return text.startsWith('"') ? JSON.parse(text) : text;
}

function saveState(file, state, cursor) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `{"state":${stateJson(state)},"modelCursor":${JSON.stringify(cursor)}}`);
}

/** Runs the case (or its handoff half); false when it is not one this mode runs. */
async function runCase(file, caseDoc, mode) {
  const steps = caseDoc.steps;
  if (!Array.isArray(steps)) throw new CaseError('case without steps');
  const fileName = path.basename(file);
  let state = null;
  let cursor = 0;
  let from = 0;
  let to = steps.length;
  if (mode.stopAfter !== null) {
    if (steps.length <= mode.stopAfter) return false;
    to = mode.stopAfter;
  } else if (mode.resumeDir !== null) {
    const saved = path.join(mode.resumeDir, fileName);
    if (!fs.existsSync(saved)) return false;
    ({ state, cursor } = loadSaved(saved));
    from = mode.fromStep;
  }
  checkCase(caseDoc);
  const obs = new Observations();
  const agent = buildAgent(caseDoc, obs);
  if ('expectDefinitionError' in caseDoc) {
    if (mode.stopAfter !== null || mode.resumeDir !== null) return false;
    checkDefinitionError(caseDoc.expectDefinitionError ?? {}, agent);
    return true;
  }
  if (agent instanceof sdk.AgentError) throw new CaseError(`agent definition refused: ${agent.code}: ${agent.message}`);
  const model = new ScriptedModel(caseDoc.model ?? [], cursor);
  const run = new CaseRun(agent, model, obs, state, usesStream(file));
  for (let i = from; i < to; i += 1) {
    if (steps[i]?.editState !== undefined) {
      if (run.state === null) throw new CaseError(`step ${i}: editState without a state`);
      // The edited text is what the next continue reads, as an application reads a stored state.
      run.state = jsonPatch(stateJson(run.state), steps[i].editState);
      continue;
    }
    try {
      const outcome = await run.step(steps[i]);
      checkExpect(steps[i].expect ?? {}, outcome);
    } catch (e) {
      if (e instanceof CaseError) throw new CaseError(`step ${i}: ${e.message}`);
      throw new CaseError(`step ${i}: ${e?.name ?? 'Error'}: ${e?.message ?? String(e)}`);
    }
  }
  if (mode.saveDir !== null) {
    if (run.state === null) throw new CaseError('no state to save');
    saveState(path.join(mode.saveDir, fileName), run.state, model.cursor);
  }
  return true;
}

function collect(p, out) {
  if (fs.statSync(p).isDirectory()) {
    for (const entry of fs.readdirSync(p).sort()) collect(path.join(p, entry), out);
  } else if (p.endsWith('.json')) {
    out.push(p);
  }
}

function usage() {
  console.error('usage: node tests/conformance/node_runner.mjs [--stop-after N --save-state DIR | --resume-state DIR --from-step N] PATH...');
  process.exitCode = 2;
  return null;
}

function parseArgs(argv) {
  const mode = { stopAfter: null, saveDir: null, resumeDir: null, fromStep: null };
  const paths = [];
  const int = (v) => (v !== undefined && /^\d+$/.test(v) ? Number(v) : NaN);
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--') continue;
    if (arg === '--stop-after') mode.stopAfter = int(argv[++i]);
    else if (arg === '--save-state') mode.saveDir = argv[++i] ?? null;
    else if (arg === '--resume-state') mode.resumeDir = argv[++i] ?? null;
    else if (arg === '--from-step') mode.fromStep = int(argv[++i]);
    else if (arg.startsWith('--')) return usage();
    else paths.push(arg);
  }
  if (Number.isNaN(mode.stopAfter) || Number.isNaN(mode.fromStep)) return usage();
  const stopping = mode.stopAfter !== null || mode.saveDir !== null;
  const resuming = mode.resumeDir !== null || mode.fromStep !== null;
  if (stopping && (resuming || mode.saveDir === null || mode.stopAfter === null || mode.stopAfter < 1)) return usage();
  if (resuming && (mode.resumeDir === null || mode.fromStep === null)) return usage();
  return { mode, paths: paths.length ? paths : ['tests/conformance/cases'] };
}

async function main(argv) {
  if (!fs.existsSync(ADDON)) {
    console.error(`node_runner: the Node binding is not built (${path.relative(process.cwd(), ADDON)} is missing).\n` +
      'Build it first: `make node`, or\n  node bindings-node/scripts/build.js --debug');
    process.exitCode = 2;
    return;
  }
  sdk = (await import(pathToFileURL(path.join(BINDING_DIR, 'index.js')).href)).default;
  exactJson = (await import(pathToFileURL(path.join(BINDING_DIR, 'values.js')).href)).default;
  const args = parseArgs(argv);
  if (args === null) return;
  const { mode, paths } = args;
  const files = [];
  for (const p of paths) {
    if (!fs.existsSync(p)) {
      console.error(`no such case file or folder: ${p}`);
      process.exitCode = 2;
      return;
    }
    collect(p, files);
  }
  let passed = 0;
  let failed = 0;
  for (const file of files) {
    let name = file;
    let ran;
    let error = null;
    try {
      const caseDoc = exactJson.parseJson(fs.readFileSync(file, 'utf8'));
      name = caseDoc?.name ?? file;
      ran = await runCase(file, caseDoc, mode);
    } catch (e) {
      ran = null;
      error = e instanceof CaseError ? e.message : `${e?.name ?? 'Error'}: ${e?.message ?? String(e)}`;
    }
    if (ran === null) {
      failed += 1;
      console.log(`FAIL ${name}: ${error}`);
    } else if (ran) {
      passed += 1;
      console.log(`PASS ${name}`);
    }
  }
  console.log(`${passed} passed, ${failed} failed`);
  process.exitCode = failed === 0 ? 0 : 1;
}

await main(process.argv.slice(2));
