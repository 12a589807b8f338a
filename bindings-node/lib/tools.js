'use strict';
// Tool definitions (`defineTool`, alias `tool`; docs/behaviour.md §2): the definition's
// functions registered on the bridge, its values and validators in the core's format, the
// whole checked by the core. The core's form is kept under a symbol for `createAgent`.

const native = require('../native.js');
const { nativeSpec, parseJson } = require('../values.js');
const { AgentDefinitionError, nativeCall } = require('./errors.js');
const { checkedBoolean, checkedList, storable } = require('./arguments.js');
const { callback, register, thenOf } = require('./bridge.js');
const { validatorSpec } = require('./validators.js');

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

/** Checks and returns a tool definition (docs/behaviour.md §2). */
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
    // Read and checked by the core (docs/behaviour.md §15).
    maxCalls: d.maxCalls ?? undefined,
    retry: d.retry === undefined || d.retry === null ? undefined : storable(d.retry, `Invalid definition of tool '${d.id}': retry`),
    // Offered only once the core's built-in tool_search finds it (docs/behaviour.md §17).
    deferLoading: checkedBoolean(d.deferLoading, `Invalid definition of tool '${d.id}': deferLoading`),
    // MCP annotations when the tool is served (checked by the core; docs/behaviour.md §19).
    annotations: d.annotations === undefined || d.annotations === null ? undefined : storable(d.annotations, `Invalid definition of tool '${d.id}': annotations`),
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
  const parameters = nativeCall(() => parseJson(native.checkTool(nativeSpec(spec))));
  return Object.freeze({ ...d, parameters, [SPEC]: spec });
}

/** The product's short name of `defineTool`. */
const tool = defineTool;

module.exports = {
  SPEC,
  defineTool,
  tool,
};
