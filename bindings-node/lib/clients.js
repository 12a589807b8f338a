'use strict';
// Stop conditions (`stepCountIs`, …) and model clients: the native ones (scripted, test,
// the Phaseo gateway, OpenAI-compatible; their options checked here, an unknown one refused
// by name) and a caller's host client (a function, or `generate`/`stream`), as a run hands
// them to the core.

const native = require('../native.js');
const { AgentDefinitionError, nativeCall } = require('./errors.js');
const { argumentJson } = require('./arguments.js');
const { callback, register } = require('./bridge.js');

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

/** An HTTP client of `kind` from `options` as the product spells them: the core reads and
 * checks every option (`phaseo_agent::spec::http_client_options`: the transport keys, at the
 * top level or in `clientOptions`, and for the gateway `preset`, `requestOptions` and the
 * named body options), refusing an unknown or wrong one by name. */
function httpClient(kind, options, what) {
  if (options === null || typeof options !== 'object') {
    throw new AgentDefinitionError(`${what}: options must be an object`, { code: 'definition_invalid' });
  }
  const given = { ...options };
  // An SDK instance and a fetch function are not JSON: the core refuses them by key.
  if (given.client !== undefined && given.client !== null) given.client = {};
  const inner = given.clientOptions;
  if (inner !== null && typeof inner === 'object' && inner.fetchImpl !== undefined && inner.fetchImpl !== null) {
    given.clientOptions = { ...inner, fetchImpl: true };
  }
  const text = argumentJson(given, `${what}: options`);
  return nativeClient(() => native.NativeModelClient.http(kind, text));
}

/** The Phaseo gateway client (`POST {baseUrl}/responses`); `apiKey` defaults to
 * `PHASEO_API_KEY`, `baseUrl` to `PHASEO_BASE_URL` or `https://api.phaseo.app/v1`. Takes the
 * product's options too: `clientOptions: {apiKey, baseURL, timeoutMs, headers}`, `preset`
 * (the model `@<preset>` when none is set), the body options (`toolChoice`,
 * `parallelToolCalls`, `responseFormat`, `metadata`, …) and `requestOptions` (any other
 * body field); what the agent and run set wins over all of them. */
function createGatewayAgentClient(options = {}) {
  return httpClient('gateway', options, 'createGatewayAgentClient');
}

/** An OpenAI-compatible chat-completions client (OpenAI, vLLM, Ollama, llama.cpp, LM
 * Studio); defaults from `OPENAI_BASE_URL` / `OPENAI_API_KEY`. */
function createOpenAICompatibleClient(options = {}) {
  return httpClient('openai-compatible', options, 'createOpenAICompatibleClient');
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

module.exports = {
  clientSpec,
  createGatewayAgentClient,
  createOpenAICompatibleClient,
  createScriptedClient,
  createTestClient,
  finishReasonIs,
  hasToolCall,
  maxCost,
  maxDuration,
  maxTokensUsed,
  stepCountIs,
  stopSpecs,
};
