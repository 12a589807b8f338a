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
