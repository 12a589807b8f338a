'use strict';
// Agents (docs/behaviour.md §3): `createAgent` puts a definition in the core's form (tools,
// validators, stop conditions, MCP servers, store), and `Agent` runs it (run, continue,
// stream, recover), each run with its client, listener and stop conditions registered for
// the run only and released when it settles. The top layer: it builds on every other module.

const native = require('../native.js');
const tracing = require('../tracing.js');
const { nativeSpec, parseJson } = require('../values.js');
const { AgentDefinitionError, decodeError, nativeCall } = require('./errors.js');
const { argumentJson, checkedBoolean, checkedList, definitionError, storable } = require('./arguments.js');
const { callables, callback, newDriver, noop, pollRun, register } = require('./bridge.js');
const { validatorSpec } = require('./validators.js');
const { SPEC, defineTool } = require('./tools.js');
const { clientSpec, stopSpecs } = require('./clients.js');
const { AgentStreamResult, settleRun } = require('./results.js');
const { mcpServerSpecs } = require('./mcp.js');
const { continueTarget, nativeStore, runStore } = require('./stores.js');

// `Symbol.asyncDispose` (Node 20.4+, 18.18+); the registry symbol Node uses otherwise.
const ASYNC_DISPOSE = Symbol.asyncDispose ?? Symbol.for('nodejs.asyncDispose');

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

/** Approvals or rejections in the core's format; an approval's `editedInput` is checked
 * here like any argument and validated by the core like the model's arguments. */
function decisionSpecs(list) {
  if (!list) return undefined;
  return list.map((d) => (typeof d === 'string' ? d : {
    toolCallId: d.toolCallId,
    reason: d.reason ?? undefined,
    editedInput: d.editedInput === undefined ? undefined : storable(d.editedInput, `editedInput of tool call ${d.toolCallId}`),
  }));
}

/** `toolOutputs` or `responses` (named `what`): each output as checked JSON text. */
function outputSpecs(list, what) {
  if (!list) return undefined;
  return list.map((o) => ({ toolCallId: o.toolCallId, output: argumentJson(o.output ?? null, `${what}: output of tool call ${o.toolCallId}`) }));
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
  constructor(definition, nativeAgent, spec) {
    this.id = definition.id;
    this.definition = definition;
    this._native = nativeAgent;
    this._spec = spec;
  }

  /** A tool that runs this agent (docs/behaviour.md §18): `id` defaults to the agent's id,
   * `parameters` to one string `input`; the nested run's pauses surface on the outer run
   * as pending calls `<outerCallId>/<nestedCallId>`. */
  asTool(options = {}) {
    if (options === null || typeof options !== 'object') throw definitionError('asTool options must be an object {id?, description?, parameters?}');
    for (const key of Object.keys(options)) {
      if (key !== 'id' && key !== 'description' && key !== 'parameters') throw definitionError(`asTool: unknown key '${key}'`);
    }
    const id = options.id ?? this.id;
    if (typeof id !== 'string') throw definitionError('asTool: id must be a string');
    const spec = {
      id,
      description: options.description ?? undefined,
      parameters: options.parameters === undefined || options.parameters === null ? undefined : storable(options.parameters, 'parameters'),
      agent: this._spec,
    };
    const parameters = nativeCall(() => parseJson(native.checkTool(nativeSpec(spec))));
    return Object.freeze({ id, description: spec.description ?? '', parameters, agent: this, [SPEC]: spec });
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
      toolOutputs: outputSpecs(options.toolOutputs, 'toolOutputs'),
      responses: outputSpecs(options.responses, 'responses'),
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

/** `parseOutput(text)` (the product's hook) as a host function; the core checks it, runs it on
 * the final text and `outputSchema` on what it returns (docs/behaviour.md §3). */
function parseOutputSpec(parseOutput) {
  if (parseOutput === undefined || parseOutput === null) return undefined;
  return typeof parseOutput === 'function' ? callback(register((text) => parseOutput(text))) : String(parseOutput);
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

/** Defines an agent (docs/behaviour.md §3). */
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
    outputSchema: validatorSpec(definition.outputSchema, false),
    parseOutput: parseOutputSpec(definition.parseOutput),
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
  const nativeAgent = nativeCall(() => new native.NativeAgent(nativeSpec(spec), store));
  return new Agent({ ...definition, tools }, nativeAgent, spec);
}

function leaseSpec(lease) {
  if (lease === undefined || lease === null) return undefined;
  if (typeof lease !== 'object') throw definitionError('lease must be an object {durationMs, renewEveryMs}');
  for (const key of Object.keys(lease)) {
    if (key !== 'durationMs' && key !== 'renewEveryMs') throw definitionError(`lease: unknown key '${key}'`);
  }
  return { durationMs: lease.durationMs ?? undefined, renewEveryMs: lease.renewEveryMs ?? undefined };
}

module.exports = {
  Agent,
  createAgent,
};
