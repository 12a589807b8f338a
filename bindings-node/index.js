'use strict';
// @phaseo/agent-sdk — the public JavaScript layer over the Rust core. It only adapts host
// idioms (functions, Promises, async generators, AbortSignal, zod-like validators, Error
// classes); every behaviour lives in the core.
//
// The code is in lib/, one module per concept, each requiring only the ones before it in
// this order (over values.js, native.js and tracing.js): state (the result object), errors,
// arguments (checks of caller values), bridge (the dispatcher and the callable registry),
// validators, tools, clients (and stop conditions), results, mcp, stores, agents. This
// file is the public API.

const tracing = require('./tracing.js');
const errors = require('./lib/errors.js');
const { jsonSchemaValidator } = require('./lib/validators.js');
const { defineTool, tool } = require('./lib/tools.js');
const clients = require('./lib/clients.js');
const { AgentStreamResult } = require('./lib/results.js');
const { createMcpServer } = require('./lib/mcp.js');
const { McpToolServer, serveMcp } = require('./lib/serve.js');
const stores = require('./lib/stores.js');
const { createAgent } = require('./lib/agents.js');

module.exports = {
  AgentCancelledError: errors.AgentCancelledError,
  AgentMcpError: errors.AgentMcpError,
  errorClass: errors.errorClass,
  AgentContinueError: errors.AgentContinueError,
  AgentDefinitionError: errors.AgentDefinitionError,
  AgentError: errors.AgentError,
  AgentGatewayError: errors.AgentGatewayError,
  AgentLeaseLostError: errors.AgentLeaseLostError,
  AgentMaxStepsError: errors.AgentMaxStepsError,
  AgentModelError: errors.AgentModelError,
  AgentSchemaValidationError: errors.AgentSchemaValidationError,
  AgentStateError: errors.AgentStateError,
  AgentStoreError: errors.AgentStoreError,
  AgentStreamResult,
  AgentToolError: errors.AgentToolError,
  AgentToolTimeoutError: errors.AgentToolTimeoutError,
  AgentUnknownToolError: errors.AgentUnknownToolError,
  STATE_VERSION: 1,
  RunStore: stores.RunStore,
  createAgent,
  createGatewayAgentClient: clients.createGatewayAgentClient,
  createInMemoryRunStore: stores.createInMemoryRunStore,
  createMcpServer,
  McpToolServer,
  serveMcp,
  createOpenAICompatibleClient: clients.createOpenAICompatibleClient,
  createPostgresRunStore: stores.createPostgresRunStore,
  createSqliteRunStore: stores.createSqliteRunStore,
  createScriptedClient: clients.createScriptedClient,
  createTestClient: clients.createTestClient,
  defineTool,
  enableTracing: tracing.enableTracing,
  flushTracing: tracing.flushTracing,
  shutdownTracing: tracing.shutdownTracing,
  finishReasonIs: clients.finishReasonIs,
  hasToolCall: clients.hasToolCall,
  isAgentGatewayError: errors.isAgentGatewayError,
  jsonSchemaValidator,
  maxCost: clients.maxCost,
  maxDuration: clients.maxDuration,
  maxTokensUsed: clients.maxTokensUsed,
  parseState: stores.parseState,
  stepCountIs: clients.stepCountIs,
  tool,
};
