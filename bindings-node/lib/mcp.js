'use strict';
// MCP servers (docs/behaviour.md §11): `createMcpServer` registers the declaration's
// functions on the bridge and lets the core check it; an agent's `mcpServers` takes only
// declarations made here (kept under a symbol).

const native = require('../native.js');
const { nativeSpec } = require('../values.js');
const { AgentDefinitionError, nativeCall } = require('./errors.js');
const { definitionError } = require('./arguments.js');
const { callback, register } = require('./bridge.js');

const MCP = Symbol('phaseo.mcpServer');
/** Declares an MCP server: `{name, command, args, env, cwd}` (stdio: a child process) or
 * `{name, url, headers, bearerToken}` (Streamable HTTP), with `options` (docs/behaviour.md
 * §11). Give it to an agent as `mcpServers: [...]`; it starts when a run first needs its
 * tools. The core checks the declaration here (every refusal names the server and the key). */
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
  nativeCall(() => native.checkMcpServer(nativeSpec(spec)));
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

module.exports = {
  createMcpServer,
  mcpServerSpecs,
};
