'use strict';
// Serving the application's tools as an MCP server (docs/behaviour.md §19): the core reads
// the options and runs the server; every call keeps the tool's validation, approval (asked
// through elicitation), timeout, retries, budgets and `toolConcurrency`.

const native = require('../native.js');
const { nativeSpec } = require('../values.js');
const { AgentDefinitionError, decodeError } = require('./errors.js');
const { defineTool, SPEC } = require('./tools.js');
const { Agent } = require('./agents.js');
const { clientSpec } = require('./clients.js');
const { callables } = require('./bridge.js');

const SERVE_KEYS = new Set(['tools', 'agent', 'client', 'description', 'name', 'version', 'transport', 'toolExecution']);
const ASYNC_DISPOSE = Symbol.asyncDispose ?? Symbol.for('Symbol.asyncDispose');

/** A running MCP server: `url` (Streamable HTTP), `closed` (a Promise that resolves when
 * it stops: end of input on stdio, or `close()`), `close()`; also `await using`. */
class McpToolServer {
  constructor(nativeServer, release = () => {}, agent = undefined) {
    this._native = nativeServer;
    // The served agent, held while the server runs it.
    this._agent = agent;
    /** Resolves when the server stops; while pending it keeps the process alive. The
     * served agent's host client functions are released once it has stopped. */
    this.closed = nativeServer.wait().finally(release);
  }

  /** `http://host:port/path` of a Streamable HTTP server; `null` on stdio. */
  get url() {
    return this._native.url ?? null;
  }

  /** Stops the server (calls in flight are cancelled); resolves once it has stopped. */
  async close() {
    await this._native.close();
    await this.closed;
  }

  async [ASYNC_DISPOSE]() {
    await this.close();
  }
}

/** Serves `tools` (definitions or `defineTool` results) as an MCP server:
 * `await serveMcp({tools, name, version?, transport?, toolExecution?})`, or one agent as a
 * single tool: `await serveMcp({agent, client, description?, name, ...})` (docs/behaviour.md
 * §19: the agent's id, one string `input`; its runs use `client`, its approvals are asked
 * of the MCP client through elicitation). `transport` is `'stdio'` (default), `'http'` or
 * `{type: 'http', host?, port?, path?, authToken?, allowedOrigins?, allowedHosts?}`.
 * Rejects with `AgentDefinitionError` when invalid (a tool without `execute` cannot be
 * served, nor an agent without a client). */
async function serveMcp(options) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError('serveMcp needs {tools | agent, name, version?, transport?, toolExecution?}');
  }
  for (const key of Object.keys(options)) {
    if (!SERVE_KEYS.has(key)) {
      throw new AgentDefinitionError(`Invalid MCP server options: unknown key '${key}'`, { code: 'definition_invalid' });
    }
  }
  const tools = (options.tools ?? []).map((t) => (t[SPEC] ? t : defineTool(t)));
  const agent = options.agent ?? undefined;
  if (agent !== undefined && !(agent instanceof Agent)) {
    throw new TypeError('serveMcp: agent must come from createAgent()');
  }
  const spec = {
    name: options.name,
    version: options.version ?? undefined,
    tools: tools.map((t) => t[SPEC]),
    agent: agent?._spec,
    description: options.description ?? undefined,
    transport: options.transport ?? undefined,
    toolExecution: options.toolExecution ?? undefined,
  };
  // The client's host functions stay registered while the server runs (the agent's runs
  // call them), not only for one run.
  const registered = [];
  const release = () => { for (const id of registered) callables.delete(id); };
  const client = options.client === undefined || options.client === null
    ? { spec: undefined, scripted: undefined }
    : clientSpec(options.client, registered);
  let server;
  try {
    server = await native.serveMcp(nativeSpec(spec), client.spec, client.scripted ?? undefined);
  } catch (error) {
    release();
    throw decodeError(error);
  }
  return new McpToolServer(server, release, agent);
}

module.exports = { McpToolServer, serveMcp };
