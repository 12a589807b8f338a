// ES module entry: the same API as index.js.
import sdk from './index.js';

export const {
  AgentCancelledError, AgentLeaseLostError, AgentMcpError, AgentStoreError, errorClass, AgentContinueError, AgentDefinitionError, AgentError, AgentGatewayError,
  AgentMaxStepsError, AgentModelError, AgentSchemaValidationError, AgentStateError, AgentStreamResult,
  AgentToolError, AgentToolTimeoutError, AgentUnknownToolError, STATE_VERSION, createAgent,
  createGatewayAgentClient, createOpenAICompatibleClient, createScriptedClient, createTestClient, defineTool, finishReasonIs, hasToolCall, isAgentGatewayError,
  jsonSchemaValidator, maxCost, maxDuration, maxTokensUsed, parseState, stepCountIs, tool,
} = sdk;
export default sdk;
