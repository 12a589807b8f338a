'use strict';
// Checks of what the caller passes (definition values, run options, `setContext`): a value
// that cannot be stored throws the host's TypeError or RangeError (`argumentError`), a value
// of the wrong kind an AgentDefinitionError. The bridge, tools, clients, MCP servers and
// agents all check their arguments this way, so it sits right above the errors.

const { ValueError, errorMessage, writeExact } = require('../values.js');
const { AgentDefinitionError } = require('./errors.js');

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

function definitionError(message) {
  return new AgentDefinitionError(`Invalid agent definition: ${message}`, { code: 'definition_invalid' });
}

module.exports = {
  argumentError,
  argumentJson,
  checkedBoolean,
  checkedList,
  definitionError,
  storable,
};
