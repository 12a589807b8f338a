'use strict';
// Serving the application's tools as an MCP server (docs/behaviour.md §19): the core reads
// the options and runs the server; every call keeps the tool's validation, approval (asked
// through elicitation), timeout, retries, budgets and `toolConcurrency`.

const native = require('../native.js');
const { AgentDefinitionError, decodeError } = require('./errors.js');
const { defineTool, SPEC } = require('./tools.js');

const SERVE_KEYS = new Set(['tools', 'name', 'version', 'transport', 'toolExecution']);
const ASYNC_DISPOSE = Symbol.asyncDispose ?? Symbol.for('Symbol.asyncDispose');

/** A running MCP server: `url` (Streamable HTTP), `closed` (a Promise that resolves when
 * it stops: end of input on stdio, or `close()`), `close()`; also `await using`. */
class McpToolServer {
  constructor(nativeServer) {
    this._native = nativeServer;
    /** Resolves when the server stops; while pending it keeps the process alive. */
    this.closed = nativeServer.wait();
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
 * `await serveMcp({tools, name, version?, transport?, toolExecution?})`. `transport` is
 * `'stdio'` (default), `'http'` or `{type: 'http', host?, port?, path?, authToken?,
 * allowedOrigins?, allowedHosts?}`. Rejects with `AgentDefinitionError` when invalid
 * (a tool without `execute` cannot be served). */
async function serveMcp(options) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError('serveMcp needs {tools, name, version?, transport?, toolExecution?}');
  }
  for (const key of Object.keys(options)) {
    if (!SERVE_KEYS.has(key)) {
      throw new AgentDefinitionError(`Invalid MCP server options: unknown key '${key}'`, { code: 'definition_invalid' });
    }
  }
  const tools = (options.tools ?? []).map((t) => (t[SPEC] ? t : defineTool(t)));
  const spec = {
    name: options.name,
    version: options.version ?? undefined,
    tools: tools.map((t) => t[SPEC]),
    transport: options.transport ?? undefined,
    toolExecution: options.toolExecution ?? undefined,
  };
  let server;
  try {
    server = await native.serveMcp(spec);
  } catch (error) {
    throw decodeError(error);
  }
  return new McpToolServer(server);
}

module.exports = { McpToolServer, serveMcp };
