'use strict';
// The AgentError classes, one per error code (docs/behaviour.md §9), and the turning of the
// core's encoded errors into them (`decodeError`; `nativeCall` for a synchronous call into
// the core). Low in the stack: every module that calls the core rethrows through here.

const { parseJson } = require('../values.js');
const { withStateJSON } = require('./state.js');

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

/** The error class of a code of docs/behaviour.md §9 (`AgentError` for a code this version
 * does not know). */
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

function isAgentGatewayError(error) {
  return error instanceof AgentGatewayError;
}

module.exports = {
  AgentCancelledError,
  AgentContinueError,
  AgentDefinitionError,
  AgentError,
  AgentGatewayError,
  AgentLeaseLostError,
  AgentMaxStepsError,
  AgentMcpError,
  AgentModelError,
  AgentSchemaValidationError,
  AgentStateError,
  AgentStoreError,
  AgentToolError,
  AgentToolTimeoutError,
  AgentUnknownToolError,
  decodeError,
  errorClass,
  isAgentGatewayError,
  nativeCall,
};
