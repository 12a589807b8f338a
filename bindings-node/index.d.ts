// Type definitions of @phaseo/agent-sdk (hand-written; checked by `tsc --noEmit --strict`
// over test/typed-usage.ts in `make test`).

/** A value the SDK stores (SPEC §7): nested at most 64 levels deep, no cycles, integers
 * within 64 bits. Integers beyond ±(2^53 − 1) are `bigint` wherever the SDK hands values
 * to JavaScript, and a `bigint` is written as an integer. */
export type JsonValue = null | boolean | number | bigint | string | JsonValue[] | { [key: string]: JsonValue };

/** A validator: a function returning the (possibly transformed) value or throwing; an
 * object with `parse()` or `safeParse()` (zod works); or a JSON Schema object. */
export type Validator<T = unknown> =
  | ((value: unknown) => T)
  | { parse(value: unknown): T; toJSONSchema?(): unknown }
  | { safeParse(value: unknown): { success: true; data: T } | { success: false; error: unknown }; toJSONSchema?(): unknown }
  | JsonSchemaValidator
  | Record<string, unknown>;

/** A JSON Schema validator backed by the core (draft 2020-12). */
export interface JsonSchemaValidator {
  readonly schema: Record<string, unknown>;
  safeParse(value: unknown): { success: true; data: unknown } | { success: false; error: Error };
  parse(value: unknown): unknown;
}

export interface ToolCall<TInput = unknown> {
  id: string;
  name: string;
  input: TInput;
}

/** What an executor, predicate or hook sees of its run (SPEC §2.1). */
export interface ToolContext<TContext = unknown, TInput = unknown> {
  runId: string;
  agentId: string;
  stepIndex: number;
  /** The application context as it was when the tool phase began. */
  context: TContext;
  /** `{id, name, input}`; `id` is unique in the run (an idempotency key). */
  toolCall: ToolCall<TInput>;
  /** Aborted when the call times out or the run is cancelled. */
  signal: AbortSignal;
  /** Publishes a progress value (`tool.preliminary_result`); one that cannot be stored
   * (too deep, a cycle, an integer beyond 64 bits) fails the call (`tool_event_invalid`). */
  emitProgress(value: unknown): void;
  /** Replaces the application context for later turns; throws a TypeError (a cycle, an
   * unreadable value) or RangeError (too deep, an integer beyond 64 bits) for a value
   * that cannot be stored. */
  setContext(value: TContext): void;
}

export interface NextTurnParams {
  model?: string;
  instructions?: string;
  temperature?: number;
  maxOutputTokens?: number;
  topP?: number;
  tools?: string[];
}

export type OnError = 'fail-run' | 'return-to-model';

export type Executor<TInput, TOutput, TContext> = (
  input: TInput,
  context: ToolContext<TContext, TInput>,
) => TOutput | Promise<TOutput> | AsyncGenerator<unknown, TOutput, void> | Generator<unknown, TOutput, void>;

export interface ToolDefinition<TInput = any, TOutput = unknown, TContext = any> {
  id: string;
  description?: string;
  /** JSON Schema sent to the model and validated by the core on every call. */
  parameters?: Record<string, unknown>;
  inputSchema?: Validator<TInput>;
  outputSchema?: Validator<TOutput>;
  eventSchema?: Validator;
  timeoutMs?: number;
  requireApproval?: boolean | ((input: TInput, context: ToolContext<TContext, TInput>) => boolean | Promise<boolean>);
  /** The executor; `false` (or absent) makes a manual tool. */
  execute?: Executor<TInput, TOutput, TContext> | false;
  /** Interactive hook: `null` pauses the call for human input, a value is its result. */
  onToolCalled?: (input: TInput, context: ToolContext<TContext, TInput>) => unknown | Promise<unknown>;
  /** Validates or transforms an output supplied on continue. */
  onResponseReceived?: (output: unknown, context: ToolContext<TContext, TInput>) => unknown | Promise<unknown>;
  nextTurnParams?: NextTurnParams | ((input: TInput, context: ToolContext<TContext, TInput>) => NextTurnParams | Promise<NextTurnParams>);
  onError?: OnError;
}

/** A checked tool (what `defineTool` returns). */
export type Tool<TInput = any, TOutput = unknown, TContext = any> = Readonly<ToolDefinition<TInput, TOutput, TContext>> & {
  readonly parameters: Record<string, unknown>;
};

export declare function defineTool<TInput = any, TOutput = unknown, TContext = any>(
  definition: ToolDefinition<TInput, TOutput, TContext>,
): Tool<TInput, TOutput, TContext>;

export declare function jsonSchemaValidator(schema: Record<string, unknown>): JsonSchemaValidator;

/** A built-in stop condition. */
export interface StopCondition {
  readonly __stopCondition?: never;
}
export type StopState = { steps: StepResult[]; usage: Usage; elapsedMs: number; stepCount: number };
export type StopWhen = StopCondition | ((state: StopState) => boolean | string | Promise<boolean | string>);

export declare function stepCountIs(n: number): StopCondition;
export declare function maxTokensUsed(n: number): StopCondition;
export declare function maxCost(x: number): StopCondition;
export declare function maxDuration(ms: number): StopCondition;
export declare function hasToolCall(name: string): StopCondition;
export declare function finishReasonIs(reason: string): StopCondition;

export interface ModelToolCall {
  id: string;
  name: string;
  /** The raw JSON text the model sent. */
  arguments: string;
}

export interface ModelRequest {
  agentId: string;
  model: string | null;
  instructions: string | null;
  messages: Message[];
  tools: { id: string; description: string; parameters: Record<string, unknown> }[];
  context: unknown;
  temperature: number | null;
  maxOutputTokens: number | null;
  topP: number | null;
  stream: boolean;
}

/** A model response: the full form, or the short scripted form. */
export type ModelResponse =
  | {
      message: { content: string; toolCalls?: ModelToolCall[]; reasoning?: string };
      usage?: Partial<Usage>;
      finishReason?: string;
      requestId?: string;
      model?: string;
      provider?: string;
      cost?: number;
    }
  | {
      text?: string;
      toolCalls?: Array<Omit<ModelToolCall, 'arguments'> & { arguments: string | JsonValue }>;
      reasoning?: string;
      usage?: Partial<Usage>;
      cost?: number;
      finishReason?: string;
      fail?: string | { message: string };
    };

/** Any object with `generate(request)` is a model client. */
export interface ModelClient {
  generate(request: ModelRequest): ModelResponse | Promise<ModelResponse>;
}

export interface ScriptedClient {
  /** Responses consumed so far. */
  readonly cursor: number;
}
export interface TestClient {
  readonly __testClient?: never;
}
export declare function createScriptedClient(responses: ModelResponse[], options?: { used?: number }): ScriptedClient;
export declare function createTestClient(): TestClient;

/** Options of the HTTP clients; unset fields come from the environment. The API key is
 * never written to state, events, errors or logs. */
export interface HttpClientOptions {
  apiKey?: string;
  baseUrl?: string;
  model?: string;
  /** Request timeout (default 60 000 ms). */
  timeoutMs?: number;
  headers?: Record<string, string>;
}
export interface HttpModelClient {
  readonly __httpClient?: never;
}
/** The Phaseo gateway client (Responses API): `PHASEO_API_KEY`, `PHASEO_BASE_URL`. */
export declare function createGatewayAgentClient(options?: HttpClientOptions): HttpModelClient;
/** An OpenAI-compatible chat-completions client: `OPENAI_BASE_URL`, `OPENAI_API_KEY`. */
export declare function createOpenAICompatibleClient(options?: HttpClientOptions): HttpModelClient;

/** Token counts. Typed `number` so that arithmetic on them type-checks: a count beyond
 * 2^53 − 1 (only from a model endpoint reporting absurd counts or an edited state) is a
 * `bigint` at run time, exact. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  totalTokens: number;
  cost: number;
}

export interface Message {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  toolCalls?: ToolCall[];
  toolCallId?: string;
  name?: string;
  isError?: boolean;
  reasoning?: string;
}

export type RunStatus = 'queued' | 'running' | 'waiting_for_human' | 'completed' | 'stopped' | 'failed' | 'cancelled';
export type PendingKind = 'approval' | 'manual' | 'hitl';
export type PauseKind = 'tool_approval' | 'hitl' | 'manual_tool' | 'human_review';

export interface PendingToolCall {
  call: ToolCall;
  kind: PendingKind;
  reason: string;
}

export interface Pause {
  id: string;
  reason: string;
  payload: unknown;
  requestedAt: string;
  kind: PauseKind;
  pendingToolCalls: PendingToolCall[];
}

export interface ToolResult {
  toolCallId: string;
  toolName: string;
  result?: unknown;
  preliminaryResults: unknown[];
  error?: string;
}

export interface StepResult {
  stepIndex: number;
  text: string;
  reasoning?: string;
  toolCalls: ToolCall[];
  toolResults: ToolResult[];
  usage: Usage;
  finishReason: string | null;
}

export type Item =
  | { type: 'message'; role: 'assistant'; content: string }
  | { type: 'reasoning'; text: string }
  | { type: 'tool_call'; toolCallId: string; name: string; input: unknown }
  | { type: 'tool_result'; toolCallId: string; name: string; output: unknown }
  | { type: 'error'; message: string; toolCallId: string; toolName: string }
  | { type: 'output'; value: unknown };

export interface RunRecord {
  id: string;
  agentId: string;
  status: RunStatus;
  input: unknown;
  context: unknown;
  messages: Message[];
  result: unknown;
  error: { code: ErrorCode; message: string } | null;
  pause: Pause | null;
  stopReason: string | null;
  usage: Usage;
  createdAt: string;
  updatedAt: string;
  stepCount: number;
  nextTurnParams: NextTurnParams | null;
  model: string | null;
  maxSteps: number | null;
}

/** The result of a run: plain JSON data and the whole resumable state —
 * `JSON.stringify(result)` is the canonical state, continuable in any language. */
export interface RunResult<TOutput = unknown> {
  version: 1;
  run: RunRecord;
  steps: { index: number; status: string; modelAttempts: number; model: string | null; requestId: string | null; provider: string | null }[];
  stepResults: StepResult[];
  usage: Usage;
  output: TOutput | null;
  items: Item[];
}

export interface AgentEvent {
  type: string;
  runId: string;
  agentId: string;
  timestamp: string;
  status?: RunStatus;
  stepIndex?: number;
  [key: string]: unknown;
}

export interface ToolExecutionConfig {
  toolConcurrency?: number;
  onError?: OnError;
  maxOutputChars?: number;
}

export interface ModelRetry {
  maxRetries?: number;
  backoffMs?: number;
}

export interface TurnContext {
  numberOfTurns: number;
  stepIndex: number;
  messages: Message[];
  context: unknown;
}

export type Dynamic<T> = T | ((turn: TurnContext) => T | Promise<T>);

export interface HumanReviewContext {
  runId: string;
  agentId: string;
  stepIndex: number;
  input: unknown;
  context: unknown;
  messages: Message[];
  response: unknown;
  isFinal: boolean;
}

export interface AgentDefinition<TContext = any> {
  id: string;
  model?: Dynamic<string>;
  instructions?: Dynamic<string>;
  tools?: Array<Tool | ToolDefinition>;
  maxSteps?: number;
  stopWhen?: StopWhen | StopWhen[];
  modelRetry?: ModelRetry;
  toolExecution?: ToolExecutionConfig;
  temperature?: Dynamic<number>;
  maxOutputTokens?: Dynamic<number>;
  topP?: Dynamic<number>;
  outputSchema?: Validator;
  /** Agent-level approval: decides for every tool, overriding the tools' own setting. */
  requireApproval?: (call: ToolCall, context: ToolContext<TContext>) => boolean | Promise<boolean>;
  humanReview?: (ctx: HumanReviewContext) => { reason: string; payload?: unknown } | null | undefined | Promise<{ reason: string; payload?: unknown } | null | undefined>;
  /** Signs every state this agent produces (HMAC-SHA256, top-level `signature`) and refuses
   * to continue a state whose signature is missing or wrong. A list rotates secrets: the
   * first signs, any verifies. */
  stateSecret?: string | string[];
}

export interface RunOverrides {
  model?: string;
  maxSteps?: number;
  stopWhen?: StopWhen | StopWhen[];
  modelRetry?: ModelRetry;
  toolExecution?: ToolExecutionConfig;
  temperature?: number;
  maxOutputTokens?: number;
  topP?: number;
}

export interface RunOptions<TContext = unknown> extends RunOverrides {
  input: unknown;
  client: ModelClient | ScriptedClient | TestClient | HttpModelClient;
  context?: TContext;
  /** An earlier conversation to continue (multi-turn chat). */
  messages?: Message[];
  signal?: AbortSignal;
  onEvent?: (event: AgentEvent) => void | Promise<void>;
}

export type ToolDecision = string | { toolCallId: string; reason?: string };

export interface ContinueOptions<TContext = unknown> extends RunOverrides {
  /** A result, its JSON text, or what `JSON.stringify(result)` gives (for a state holding
   * `bigint`s on a Node without `JSON.rawJSON`: the exact state text as a JSON string). */
  run?: RunResult | string;
  state?: RunResult | string;
  client: ModelClient | ScriptedClient | TestClient | HttpModelClient;
  approvals?: ToolDecision[];
  rejections?: ToolDecision[];
  toolOutputs?: { toolCallId: string; output: unknown }[];
  humanInput?: string;
  context?: TContext;
  signal?: AbortSignal;
  onEvent?: (event: AgentEvent) => void | Promise<void>;
}

/** A streamed run (SPEC §6): awaitable; every iterator replays the history from the start. */
export declare class AgentStreamResult<TOutput = unknown> implements PromiseLike<RunResult<TOutput>> {
  private constructor();
  getResult(): Promise<RunResult<TOutput>>;
  getText(): Promise<string>;
  getTextStream(): AsyncIterable<string>;
  getReasoningStream(): AsyncIterable<string>;
  getItemsStream(): AsyncIterable<Item>;
  getToolStream(): AsyncIterable<AgentEvent>;
  getEventStream(): AsyncIterable<AgentEvent>;
  getFullStream(): AsyncIterable<AgentEvent | { type: 'result'; result: RunResult<TOutput> }>;
  cancel(reason?: unknown): Promise<RunResult<TOutput>>;
  then<R1 = RunResult<TOutput>, R2 = never>(
    onFulfilled?: ((value: RunResult<TOutput>) => R1 | PromiseLike<R1>) | null,
    onRejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2>;
  catch<R = never>(onRejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<RunResult<TOutput> | R>;
  finally(onFinally?: (() => void) | null): Promise<RunResult<TOutput>>;
  [Symbol.asyncIterator](): AsyncIterator<AgentEvent | { type: 'result'; result: RunResult<TOutput> }>;
}

export interface Agent<TContext = any, TOutput = unknown> {
  readonly id: string;
  readonly definition: AgentDefinition<TContext>;
  run(options: RunOptions<TContext>): Promise<RunResult<TOutput>>;
  continueRun(options: ContinueOptions<TContext>): Promise<RunResult<TOutput>>;
  stream(options: RunOptions<TContext>): AgentStreamResult<TOutput>;
  continueStream(options: ContinueOptions<TContext>): AgentStreamResult<TOutput>;
}

export declare function createAgent<TContext = any, TOutput = unknown>(definition: AgentDefinition<TContext>): Agent<TContext, TOutput>;

/** Parses and checks state JSON text (throws AgentStateError for malformed state or an
 * unsupported version); integers beyond 2^53 − 1 come back as `bigint`. Also takes what
 * `JSON.stringify(result)` gives for a state holding `bigint`s on Node 18/20 (the text as
 * a JSON string). */
export declare function parseState(text: string): RunResult;

export declare const STATE_VERSION: 1;

export type ErrorCode =
  | 'tool_input_invalid' | 'tool_output_invalid' | 'tool_event_invalid' | 'agent_output_invalid'
  | 'unknown_tool' | 'tool_timeout' | 'tool_failed' | 'max_steps' | 'continue_invalid'
  | 'state_invalid' | 'model_failed' | 'gateway' | 'definition_invalid' | 'cancelled'
  | 'mcp_failed';

/** Base of every SDK error: `code` is stable across languages; `result` carries a failed
 * run's final state (undefined for a refused continue). */
export declare class AgentError extends Error {
  readonly code: ErrorCode;
  readonly result: RunResult | undefined;
  constructor(message: string, details?: { code?: ErrorCode; result?: RunResult; [key: string]: unknown });
}
export declare class AgentSchemaValidationError extends AgentError {
  readonly target: 'tool_input' | 'tool_output' | 'tool_event' | 'agent_output';
}
export declare class AgentToolTimeoutError extends AgentError {}
export declare class AgentUnknownToolError extends AgentError {}
export declare class AgentToolError extends AgentError {}
export declare class AgentMaxStepsError extends AgentError {}
export declare class AgentContinueError extends AgentError {}
export declare class AgentStateError extends AgentError {}
export declare class AgentModelError extends AgentError {}
export declare class AgentGatewayError extends AgentModelError {
  readonly status: number;
  readonly statusText: string;
  readonly requestId: string | undefined;
  readonly reason: string | undefined;
}
export declare class AgentDefinitionError extends AgentError {}
export declare class AgentCancelledError extends AgentError {}
export declare function isAgentGatewayError(error: unknown): error is AgentGatewayError;
