// ES module entry: the same API as index.js.
import sdk from './index.js';

export const {
  AgentCancelledError, AgentContinueError, errorClass, AgentDefinitionError, AgentError, AgentGatewayError,
  AgentLeaseLostError, AgentMaxStepsError, AgentMcpError, AgentModelError, AgentSchemaValidationError, AgentStateError, AgentStoreError, AgentStreamResult, RunStore,
  AgentToolError, AgentToolTimeoutError, AgentUnknownToolError, STATE_VERSION, createAgent,
  createGatewayAgentClient, createInMemoryRunStore, createMcpServer, McpToolServer, serveMcp, createOpenAICompatibleClient, createPostgresRunStore, createSqliteRunStore, createScriptedClient, createTestClient, defineTool, enableTracing, flushTracing, shutdownTracing, finishReasonIs, hasToolCall, isAgentGatewayError,
  jsonSchemaValidator, maxCost, maxDuration, maxTokensUsed, parseState, stepCountIs, tool,
} = sdk;
export default sdk;
