/// <reference lib="esnext.disposable" />
// Type definitions of @phaseo/agent-sdk (hand-written; checked by `tsc --noEmit --strict`
// over test/typed-usage.ts in `make test`).

/** A value the SDK stores (docs/behaviour.md §7): nested at most 64 levels deep, no cycles, integers
 * within 64 bits. Integers beyond ±(2^53 − 1) are `bigint` wherever the SDK hands values
 * to JavaScript, and a `bigint` is written as an integer. */
export type JsonValue = null | boolean | number | bigint | string | JsonValue[] | { [key: string]: JsonValue };

/** One problem a Standard Schema validator reports. */
export interface StandardSchemaIssue {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

/** The outcome of a Standard Schema validation. */
export type StandardSchemaResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<StandardSchemaIssue> };

/** The Standard Schema interface (zod 4, Valibot, ArkType …), with the Standard JSON
 * Schema converter where the library has it: a tool whose `inputSchema` is one sends its
 * JSON Schema as `parameters` and hands `execute` the validated output, typed as `Output`
 * (docs/behaviour.md §20). */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardSchemaResult<Output> | Promise<StandardSchemaResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
    readonly jsonSchema?: {
      readonly input: (options: { readonly target: string }) => Record<string, unknown>;
      readonly output: (options: { readonly target: string }) => Record<string, unknown>;
    } | undefined;
  };
}

/** A validator: a Standard Schema (zod 4, Valibot, ArkType: its JSON Schema is sent to the
 * model when it can give one); a function returning the (possibly transformed) value or
 * throwing; an object with `parse()` or `safeParse()`; or a JSON Schema object. */
export type Validator<T = unknown> =
  | StandardSchemaV1<unknown, T>
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

/** What an executor, predicate or hook sees of its run (docs/behaviour.md §2.1). */
export interface ToolContext<TContext = unknown, TInput = unknown> {
  runId: string;
  agentId: string;
  stepIndex: number;
  /** The application context as it was when the tool phase began. */
  context: TContext;
  /** `{id, name, input}`; `id` is unique in the run (an idempotency key). */
  toolCall: ToolCall<TInput>;
  /** The number of this attempt at the call, from 1: a tool with `retry` runs again after
   * an attempt that threw or timed out (docs/behaviour.md §15). */
  attempt: number;
  /** `"<runId>:<toolCallId>"`: the same for every attempt, for a call approved on continue
   * in another process and for a call run again by `recover`; pass it to a side-effecting
   * service so that the effect happens at most once. */
  idempotencyKey: string;
  /** An MCP tool's annotations (`readOnlyHint`, `destructiveHint`, …; `{}` when the server
   * gave none), in approval predicates; absent for other tools. */
  toolAnnotations?: McpToolAnnotations;
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
  /** The tools offered next turn: ids, or the tool objects themselves (the product's form). */
  tools?: Array<string | { id: string }>;
  /** Same as `tools` (ids). */
  activeTools?: string[];
  toolChoice?: ToolChoice;
}

/** Which tool the model must call (docs/behaviour.md §12). */
export type ToolChoice = 'auto' | 'required' | 'none' | { toolId: string };

export type OnError = 'fail-run' | 'return-to-model';

export type Executor<TInput, TOutput, TContext> = (
  input: TInput,
  context: ToolContext<TContext, TInput>,
) => TOutput | Promise<TOutput> | AsyncGenerator<unknown, TOutput, void> | Generator<unknown, TOutput, void>;

export interface ToolDefinition<TInput = any, TOutput = unknown, TContext = any> {
  id: string;
  description?: string;
  /** Hints listed when the tool is served over MCP (`serveMcp`); a tool that needs approval
   * is listed `destructiveHint: true` unless set here. */
  annotations?: { title?: string; readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean };
  /** JSON Schema sent to the model and validated by the core on every call. */
  parameters?: Record<string, unknown>;
  /** The arguments' validator. A Standard Schema (zod 4, Valibot, ArkType) is the typed
   * form (docs/behaviour.md §20): without `parameters` its JSON Schema is sent (the strict
   * form with `strict: true`), each call's arguments are validated by it after the core's
   * schema check (an issue is `Invalid tool input: <path>: <reason>`), and `execute`
   * receives its output, typed from the schema. */
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
  /** Ask the model for schema-exact arguments; `parameters` must then be strict-compatible
   * (every object schema has `additionalProperties: false` and lists all its properties
   * in `required`), checked at definition. */
  strict?: boolean;
  /** Example argument objects, sent with the tool where the client supports them. */
  inputExamples?: Record<string, unknown>[];
  /** At most this many calls of the tool in a run (a whole number ≥ 1); a call beyond is
   * refused with an error the model sees, and the run goes on. */
  maxCalls?: number;
  /** Retries of a call whose executor throws or times out. */
  retry?: ToolRetry;
  /** Not offered to the model at first: the built-in `tool_search` finds and loads it,
   * and it is offered from the next model request to the end of the run (loaded tools
   * are kept in the state as `run.loadedTools`, so a continued run keeps them). */
  deferLoading?: boolean;
}

/** A tool's retries (docs/behaviour.md §15): `maxAttempts` attempts in all (the first
 * counts; 1 means no retry), the n-th retry after `backoffMs × n` ms (default 0). The last
 * error then follows `onError`. */
export interface ToolRetry {
  maxAttempts: number;
  backoffMs?: number;
}

/** A checked tool (what `defineTool` returns). */
export type Tool<TInput = any, TOutput = unknown, TContext = any> = Readonly<ToolDefinition<TInput, TOutput, TContext>> & {
  readonly parameters: Record<string, unknown>;
};

export declare function defineTool<TInput = any, TOutput = unknown, TContext = any>(
  definition: ToolDefinition<TInput, TOutput, TContext>,
): Tool<TInput, TOutput, TContext>;
/** The product's short name of `defineTool`. */
export declare const tool: typeof defineTool;

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

/** A call the model requested: `arguments` (the raw JSON text the model sent) or, as the
 * product's clients return it, `input` (the parsed value). */
export type ModelToolCall =
  | { id: string; name: string; arguments: string; input?: undefined }
  | { id: string; name: string; input: unknown; arguments?: undefined };

export interface ModelRequest {
  agentId: string;
  model: string | null;
  instructions: string | null;
  messages: Message[];
  tools: {
    id: string;
    description: string;
    parameters: Record<string, unknown>;
    /** Present (true) only for strict tools. */
    strict?: boolean;
    inputExamples?: Record<string, unknown>[];
  }[];
  context: unknown;
  temperature: number | null;
  maxOutputTokens: number | null;
  topP: number | null;
  stream: boolean;
  toolChoice: ToolChoice | null;
  parallelToolCalls: boolean | null;
  /** Aborted when the attempt is abandoned (the run was cancelled): pass it to `fetch`. */
  readonly signal: AbortSignal;
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
      toolCalls?: Array<{ id?: string; name: string; arguments?: string | JsonValue; input?: unknown }>;
      reasoning?: string;
      usage?: Partial<Usage>;
      cost?: number;
      finishReason?: string;
      fail?: string | { message: string };
    };

/** What a host client's `stream(request)` yields: deltas and items as they come, then the
 * final response (the last `response` event is the attempt's answer). */
export type ModelStreamEvent =
  | { type: 'text-delta'; delta: string }
  | { type: 'reasoning-delta'; delta: string }
  /** The model began writing a call's arguments (the run's `tool.input_started`). */
  | { type: 'tool-input-start'; toolCallId: string; toolName: string }
  /** The next fragment of a call's arguments text (the run's `tool.input_delta`). */
  | { type: 'tool-input-delta'; toolCallId: string; delta: string }
  | { type: 'item'; item: Item }
  | { type: 'response'; response: ModelResponse };

type ModelStreamSource = AsyncIterable<ModelStreamEvent> | Iterable<ModelStreamEvent> | Promise<AsyncIterable<ModelStreamEvent>>;

/** Any object with `generate(request)` is a model client; with `stream(request)` too, a
 * streamed run hears its deltas and items live. */
export interface ModelClient {
  generate(request: ModelRequest): ModelResponse | Promise<ModelResponse>;
  stream?(request: ModelRequest): ModelStreamSource;
}

/** What a run takes as a host client: a {@link ModelClient}, an object with only
 * `stream(request)` (also drained for runs that are not streamed), or a plain function
 * `(request) => response`. */
export type HostModelClient =
  | ModelClient
  | { generate?: undefined; stream(request: ModelRequest): ModelStreamSource }
  | ((request: ModelRequest) => ModelResponse | Promise<ModelResponse>);

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
/** The product's transport options (what `clientOptions` holds). */
export interface GatewayClientTransportOptions {
  apiKey?: string;
  baseUrl?: string;
  /** The product's spelling of `baseUrl`. */
  baseURL?: string;
  timeoutMs?: number;
  headers?: Record<string, string>;
}

/** Options of the gateway client: ours at the top level, the product's `clientOptions`,
 * and body defaults sent with every request unless the agent or run sets the field (the
 * agent's and run's values win). Unknown keys are refused (`definition_invalid`). */
export interface GatewayAgentClientOptions extends HttpClientOptions {
  clientOptions?: GatewayClientTransportOptions;
  /** The model `@<preset>` when neither the client nor the agent names one. */
  preset?: string;
  provider?: Record<string, unknown>;
  reasoning?: Record<string, unknown>;
  temperature?: number;
  maxOutputTokens?: number;
  parallelToolCalls?: boolean;
  metadata?: Record<string, string>;
  user?: string;
  responseFormat?: Record<string, unknown>;
  includeMeta?: boolean;
  webSearchOptions?: Record<string, unknown>;
  plugins?: unknown[];
  toolChoice?: 'auto' | 'none' | 'required' | Record<string, unknown>;
  providerOptions?: Record<string, unknown>;
  promptCacheKey?: string;
  /** Any other Responses body field (snake_case keys, e.g. `store`, `service_tier`); the
   * named options above win over it. */
  requestOptions?: Record<string, unknown>;
}

/** The Phaseo gateway client (Responses API): `PHASEO_API_KEY`, `PHASEO_BASE_URL`. */
export declare function createGatewayAgentClient(options?: GatewayAgentClientOptions): HttpModelClient;
/** An OpenAI-compatible chat-completions client: `OPENAI_BASE_URL`, `OPENAI_API_KEY`. */
export declare function createOpenAICompatibleClient(options?: HttpClientOptions & { clientOptions?: GatewayClientTransportOptions }): HttpModelClient;

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

/** What the run records of a step's model call. */
export interface StepRecord {
  index: number;
  status: string;
  modelAttempts: number;
  model: string | null;
  requestId: string | null;
  provider: string | null;
}

/** The result of a run: plain JSON data and the whole resumable state —
 * `JSON.stringify(result)` is the canonical state, continuable in any language. */
export interface RunResult<TOutput = unknown> {
  version: 1;
  run: RunRecord;
  steps: StepRecord[];
  stepResults: StepResult[];
  usage: Usage;
  output: TOutput | null;
  items: Item[];
  /** `run.messages` (the product's spelling); not part of the state's JSON. */
  readonly messages: Message[];
}

export interface AgentEvent {
  type: string;
  runId: string;
  agentId: string;
  timestamp: string;
  status?: RunStatus;
  stepIndex?: number;
  /** Set on the events of a nested agent's run (docs/behaviour.md §18): the outer call
   * that runs it (`<outerCallId>/<nestedCallId>` for deeper runs). */
  parentToolCallId?: string;
  [key: string]: unknown;
}

/** `tool.retrying`, before each new attempt of a tool with `retry`: `attempt` is the number
 * of the attempt about to start, `error` the message of the one that failed. */
export interface ToolRetryingEvent extends AgentEvent {
  type: 'tool.retrying';
  toolCallId: string;
  toolName: string;
  attempt: number;
  error: string;
}

/** `tool.input_started` (docs/behaviour.md §16): in a streamed run, the model began writing
 * the arguments of call `toolCallId` to tool `toolName`. */
export interface ToolInputStartedEvent extends AgentEvent {
  type: 'tool.input_started';
  stepIndex: number;
  toolCallId: string;
  toolName: string;
}

/** `tool.input_delta` (docs/behaviour.md §16): the next fragment of call `toolCallId`'s
 * arguments text. A call's fragments, in order, make its final `arguments`; they all arrive
 * before the step's `model.completed`. */
export interface ToolInputDeltaEvent extends AgentEvent {
  type: 'tool.input_delta';
  stepIndex: number;
  toolCallId: string;
  delta: string;
}

export interface ToolExecutionConfig {
  toolConcurrency?: number;
  onError?: OnError;
  maxOutputChars?: number;
  /** The most tool calls a whole run admits (≥ 1); a call beyond is refused with an error
   * the model sees. */
  maxToolCalls?: number;
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
  /** The product's model list: the first is used when `model` is unset. */
  models?: Dynamic<string[]>;
  /** A gateway preset: the model `@<preset>` when neither `model` nor `models` is set. */
  preset?: string;
  /** Turns the final text into the output (before `outputSchema`, which then checks what
   * it returns); a throw fails the run with `agent_output_invalid`. */
  parseOutput?: (text: string) => unknown;
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
  /** Which tool the model must call, fixed or per turn (docs/behaviour.md §12). */
  toolChoice?: Dynamic<ToolChoice | null>;
  /** Whether the model may request several calls in one turn. */
  parallelToolCalls?: boolean;
  /** The tool ids offered, fixed or per turn; calls to tools not offered are `unknown_tool`. */
  activeTools?: Dynamic<string[] | null>;
  /** Saves every run of this agent there (docs/behaviour.md §10): continue by `runId`, `recover`. */
  store?: RunStore | StateAccessor;
  /** How long a worker holds a store-backed run (default 30 s) and how often it renews the
   * hold while working (default 10 s). */
  lease?: { durationMs?: number; renewEveryMs?: number };
  /** MCP servers (docs/behaviour.md §11) whose tools the agent offers too (`createMcpServer`). They
   * start when a run first needs them and stop with `agent.close()` / `await using`. */
  mcpServers?: McpServer[];
}

/** An MCP tool's annotations (hints from its server). */
export interface McpToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
  [key: string]: unknown;
}

/** A listed MCP tool as a `filter` sees it (its MCP name, before any prefix). */
export interface McpToolInfo {
  name: string;
  description: string;
  annotations: McpToolAnnotations;
}

/** A stdio MCP server: `command` with `args` as a child process (`env` added to the
 * inherited environment, `cwd` its working directory). */
export interface McpStdioTransport {
  name: string;
  command: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
}

/** A Streamable HTTP MCP server at `url`, with `headers` on every request and
 * `bearerToken` as `Authorization: Bearer <token>`. */
export interface McpHttpTransport {
  name: string;
  url: string;
  headers?: Record<string, string>;
  bearerToken?: string;
}

/** An elicitation request's answer (MCP `ElicitResult`). */
export interface McpElicitationAnswer {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown>;
}

/** Options of an MCP server (docs/behaviour.md §11). */
export interface McpServerOptions<TContext = any> {
  /** Offers only these tools (MCP names). */
  allowTools?: string[];
  /** Never offers these tools (MCP names). */
  denyTools?: string[];
  /** Keeps a listed tool when it returns true (after allowTools/denyTools). */
  filter?: (tool: McpToolInfo) => boolean | Promise<boolean>;
  /** Renames each tool `x` to `<prefix>_x`. */
  toolPrefix?: string;
  /** `true` (every call), `false`, `"destructive"` (tools whose `destructiveHint` is true or
   * whose `readOnlyHint` is not true) or a predicate (`context.toolAnnotations` holds the
   * tool's annotations). */
  requireApproval?: boolean | 'destructive' | ((call: ToolCall, context: ToolContext<TContext>) => boolean | Promise<boolean>);
  /** A time limit for every call (`notifications/cancelled` is sent when it passes). */
  timeoutMs?: number;
  /** Per-tool time limits (MCP names), overriding `timeoutMs`. */
  toolTimeouts?: Record<string, number>;
  /** The error policy of this server's tools (default: the run's). */
  onError?: 'fail-run' | 'return-to-model';
  /** Lists the tools again when the cached list is older than this. */
  cacheTtlMs?: number;
  /** Runs without this server's tools when it cannot be listed, instead of failing. */
  optional?: boolean;
  /** Defers every tool of this server: none is offered until the built-in `tool_search`
   * finds and loads it (as a tool's own `deferLoading`). */
  deferLoading?: boolean;
  /** Answers the server's elicitation requests (declined without one). */
  onElicitation?: (request: { message: string; requestedSchema?: unknown; [key: string]: unknown }, context: { server: string })
    => McpElicitationAnswer | Promise<McpElicitationAnswer>;
}

/** A declared MCP server (give it to `createAgent({mcpServers})`). */
export interface McpServer {
  readonly name: string;
  readonly transport: 'stdio' | 'http';
}

/** Declares an MCP server over stdio (`{name, command, ...}`) or Streamable HTTP
 * (`{name, url, ...}`). An unknown option throws AgentDefinitionError naming it. */
export declare function createMcpServer<TContext = any>(transport: McpStdioTransport | McpHttpTransport,
  options?: McpServerOptions<TContext>): McpServer;

/** Where a served MCP server listens: stdio (default) or Streamable HTTP, bound to
 * 127.0.0.1 unless `host` says otherwise (docs/behaviour.md §19). */
export type McpServeTransport =
  | 'stdio'
  | 'http'
  | { type: 'stdio' }
  | {
      type: 'http';
      host?: string;
      /** 0 (default) picks a free port; read it from `server.url`. */
      port?: number;
      /** Default `/mcp`. */
      path?: string;
      /** Requests without `Authorization: Bearer <authToken>` get 401. */
      authToken?: string;
      /** Browser origins allowed to call (default: loopback origins only). */
      allowedOrigins?: string[];
      /** `Host` names accepted besides loopback names and `host`. */
      allowedHosts?: string[];
    };

/** Options of `serveMcp`: `tools`, or one `agent` served as a single tool. */
export interface McpServeOptions {
  /** The tools served (a tool without `execute` cannot be served). */
  tools?: Array<Tool | ToolDefinition>;
  /** An agent served as one tool (docs/behaviour.md §18's defaults: the agent's id, one
   * string `input`); a call runs it and returns its output, its approvals are asked of the
   * MCP client through elicitation. Not with `tools`. */
  agent?: Agent<any, any>;
  /** The model client the served agent's runs use (serving an agent without one throws
   * `AgentDefinitionError`); also agent tools' among `tools`. */
  client?: HostModelClient | ScriptedClient | TestClient | HttpModelClient;
  /** What clients are told the served agent does. */
  description?: string;
  name: string;
  version?: string;
  transport?: McpServeTransport;
  /** `toolConcurrency` (calls served at once) and `maxToolCalls` (over the server's life). */
  toolExecution?: ToolExecutionConfig;
}

/** A running MCP server serving tools (or an agent). */
export declare class McpToolServer {
  private constructor();
  /** `http://host:port/path` of a Streamable HTTP server; `null` on stdio. */
  readonly url: string | null;
  /** Resolves when the server stops (end of input on stdio, or `close()`). */
  readonly closed: Promise<void>;
  /** Stops the server (calls in flight are cancelled). */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Serves tools, or one agent as a single tool, as an MCP server (docs/behaviour.md §19):
 * any MCP client calls them with their validation, approval (through elicitation),
 * timeout, retries and budgets kept. */
export declare function serveMcp(options: McpServeOptions): Promise<McpToolServer>;

/** The product's state accessor: an application's own `load(runId)` / `save(state)`. Saves
 * and loads only: no at-most-once claim, no listing. */
export interface StateAccessor {
  load(runId: string): RunResult | string | null | undefined | Promise<RunResult | string | null | undefined>;
  save(state: RunResult): void | Promise<void>;
}

/** One stored run: its row columns and its state. */
export interface StoredRun {
  runId: string;
  agentId: string;
  /** The row's status: the state's, except `running` once a pause has been claimed. */
  status: RunStatus;
  pauseId: string | null;
  version: number;
  createdAtMs: number;
  updatedAtMs: number;
  leaseOwner: string | null;
  leaseExpiresAtMs: number | null;
  state: RunResult;
  /** The calls a waiting run waits on (what an approval inbox shows). */
  readonly pending: PendingToolCall[];
}

export interface RunPage {
  runs: StoredRun[];
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

export interface ListRunsOptions {
  status?: RunStatus | RunStatus[];
  agentId?: string;
  /** Page size (default 100). */
  limit?: number;
  cursor?: string | null;
}

/** Where runs are kept between processes (docs/behaviour.md §10). */
export declare class RunStore {
  private constructor();
  readonly kind: 'sqlite' | 'postgres' | 'memory';
  /** One page of runs, oldest update first; the approval inbox is
   * `list({status: 'waiting_for_human'})`. */
  list(options?: ListRunsOptions): Promise<RunPage>;
  load(runId: string): Promise<StoredRun | null>;
  delete(runId: string): Promise<boolean>;
  /** Deletes the runs of `statuses` last updated before `olderThan` (a Date, or an age in
   * milliseconds); resolves with how many. */
  prune(statuses: RunStatus | RunStatus[], options: { olderThan: Date | number }): Promise<number>;
}

/** Runs kept in the SQLite file at `path` (created and migrated when needed). */
export declare function createSqliteRunStore(path: string): RunStore;
/** Runs kept in PostgreSQL at `url`: connects and migrates, then resolves. */
export declare function createPostgresRunStore(url: string): Promise<RunStore>;
/** Runs kept in this process's memory (tests). */
export declare function createInMemoryRunStore(): RunStore;

export interface RunOverrides {
  model?: string;
  /** The first is used when `model` is unset. */
  models?: string[];
  /** The model `@<preset>` when neither `model` nor `models` is set. */
  preset?: string;
  maxSteps?: number;
  stopWhen?: StopWhen | StopWhen[];
  modelRetry?: ModelRetry;
  toolExecution?: ToolExecutionConfig;
  temperature?: number;
  maxOutputTokens?: number;
  topP?: number;
  toolChoice?: ToolChoice;
  parallelToolCalls?: boolean;
  activeTools?: string[];
}

export interface RunOptions<TContext = unknown> extends RunOverrides {
  input: unknown;
  client: HostModelClient | ScriptedClient | TestClient | HttpModelClient;
  context?: TContext;
  /** An earlier conversation to continue (multi-turn chat). */
  messages?: Message[];
  signal?: AbortSignal;
  onEvent?: (event: AgentEvent) => void | Promise<void>;
  /** Saves this run there instead of the agent's store. */
  store?: RunStore | StateAccessor;
  /** The product's state accessor (same as `store` with an accessor). */
  state?: StateAccessor;
}

/** A call id, or `{toolCallId, reason?, editedInput?}`. An approval's `editedInput` replaces
 * the model's arguments: validated like them before anything runs (an invalid one refuses
 * the continue and leaves the state usable), and the tool runs with it. */
export type ToolDecision = string | { toolCallId: string; reason?: string; editedInput?: unknown };

export interface ContinueOptions<TContext = unknown> extends RunOverrides {
  /** A result, its JSON text, or what `JSON.stringify(result)` gives (for a state holding
   * `bigint`s on a Node without `JSON.rawJSON`: the exact state text as a JSON string). */
  run?: RunResult | string;
  /** The state to continue, or the product's accessor (then with `runId`). */
  state?: RunResult | string | StateAccessor;
  /** Continues the stored run `runId` (of `store`, or of the agent's store), claiming its
   * pause at most once: a pause already continued elsewhere rejects with
   * AgentContinueError (`Pause <pauseId> of run <runId> was already continued`). Given
   * with a state, they must agree. */
  runId?: string;
  store?: RunStore | StateAccessor;
  client: HostModelClient | ScriptedClient | TestClient | HttpModelClient;
  approvals?: ToolDecision[];
  rejections?: ToolDecision[];
  /** The product's names of `approvals` / `rejections`. */
  approveToolCalls?: ToolDecision[];
  rejectToolCalls?: ToolDecision[];
  toolOutputs?: { toolCallId: string; output: unknown }[];
  /** A person's answers in place of approval-gated calls: the tool never runs, the answer
   * (checked by its `outputSchema`) is its result (docs/behaviour.md §14). */
  responses?: { toolCallId: string; output: unknown }[];
  humanInput?: string;
  context?: TContext;
  signal?: AbortSignal;
  onEvent?: (event: AgentEvent) => void | Promise<void>;
}

/** A streamed run (docs/behaviour.md §6): awaitable; every iterator replays the history from the start. */
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
  /** Recovers the stored run `runId` whose worker died (its lease expired), from its last
   * checkpoint, with the decisions its claim stored. */
  recover(runId: string, options: RecoverOptions<TContext>): Promise<RunResult<TOutput>>;
  recover(options: RecoverOptions<TContext> & { runId: string }): Promise<RunResult<TOutput>>;
  /** Stops the agent's MCP servers (stdio children end, HTTP sessions close); a later run
   * starts them again. */
  close(): Promise<void>;
  /** `await using agent = createAgent(...)` closes the agent at the end of the block. */
  [Symbol.asyncDispose](): Promise<void>;
  /** A tool that runs this agent (docs/behaviour.md §18); its pauses surface on the outer
   * run as pending calls `<outerCallId>/<nestedCallId>`. */
  asTool(options?: AsToolOptions): Tool<{ input: string }, TOutput, TContext>;
}

/** Options of `agent.asTool`. */
export interface AsToolOptions {
  /** The tool id (default: the agent's id). */
  id?: string;
  /** What the model is told the tool does. */
  description?: string;
  /** The tool's JSON Schema (default: one string `input`). */
  parameters?: Record<string, unknown>;
}

export interface RecoverOptions<TContext = unknown> extends RunOverrides {
  client: HostModelClient | ScriptedClient | TestClient | HttpModelClient;
  context?: TContext;
  store?: RunStore;
  signal?: AbortSignal;
  onEvent?: (event: AgentEvent) => void | Promise<void>;
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
  | 'store_failed' | 'lease_lost' | 'mcp_failed';

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
/** The run store failed (code `store_failed`); a run under way has its state in `result`. */
export declare class AgentStoreError extends AgentError {}
/** Another worker took over the run this one worked on (code `lease_lost`). */
export declare class AgentLeaseLostError extends AgentError {}
/** An MCP server could not start, died, or broke the protocol (code `mcp_failed`). */
export declare class AgentMcpError extends AgentError {}
/** The error class of a docs/behaviour.md §9 code (`AgentError` for a code this version does not know). */
export declare function errorClass(code: string): typeof AgentError;
export declare function isAgentGatewayError(error: unknown): error is AgentGatewayError;

// ---------------------------------------------------------------------------------------
// The product's type names (`@phaseo/agent-sdk` of the Phaseo repository), as aliases of
// ours, so that code ported from it type-checks. Shapes follow this SDK where they differ
// (e.g. `run.error` is `{code, message}`); see docs/behaviour.md.

export type AgentTool<TInput = any, TOutput = unknown, TContext = any> = ToolDefinition<TInput, TOutput, TContext>;
export type AgentRuntimeContext<TContext = unknown> = ToolContext<TContext>;
export type AgentToolCall<TInput = unknown> = ToolCall<TInput>;
export type AgentSchema<T = unknown> = Validator<T>;
export type AgentNextTurnParams = NextTurnParams;
export type AgentToolErrorPolicy = OnError;
export type AgentToolExecutionConfig = ToolExecutionConfig;
export type AgentModelRetryConfig = ModelRetry;
export type AgentStopCondition = StopWhen;
export type AgentStopWhen = StopWhen | StopWhen[];
export type AgentStopConditionContext = StopState;
export type AgentModelClient = ModelClient;
export type AgentModelRequest = ModelRequest;
export type AgentModelResponse = ModelResponse;
export type AgentModelStreamEvent = ModelStreamEvent;
export type AgentMessage = Message;
export type AgentItem = Item;
export type AgentItemBase = { id?: string };
export type AgentMessageItem = Extract<Item, { type: 'message' }>;
export type AgentReasoningItem = Extract<Item, { type: 'reasoning' }>;
export type AgentToolCallItem = Extract<Item, { type: 'tool_call' }>;
export type AgentToolResultItem = Extract<Item, { type: 'tool_result' }>;
export type AgentErrorItem = Extract<Item, { type: 'error' }>;
export type AgentOutputItem = Extract<Item, { type: 'output' }>;
export type AgentRunStatus = RunStatus;
export type AgentRunRecord = RunRecord;
export type AgentRunResult<TOutput = unknown> = RunResult<TOutput>;
export type AgentStepRecord = StepRecord;
export type AgentStepStatus = string;
export type AgentStepResult = StepResult;
export type AgentToolExecutionResult = ToolResult;
export type AgentUsageSummary = Usage;
export type AgentHumanPause = Pause;
export type AgentPendingToolCall = PendingToolCall;
export type AgentHumanReviewContext = HumanReviewContext;
export type AgentHumanReviewRequest = { reason: string; payload?: unknown };
export type AgentTurnContext = TurnContext;
export type AgentDynamicValue<T> = Dynamic<T>;
export type AgentRunOptions<TContext = unknown> = RunOptions<TContext>;
export type AgentContinueOptions<TContext = unknown> = ContinueOptions<TContext>;
export type AgentToolDecision = ToolDecision;
export type AgentToolOutput = { toolCallId: string; output: unknown };
export type AgentEventHandler = (event: AgentEvent) => void | Promise<void>;
export type AgentStreamEvent<TOutput = unknown> = AgentEvent | { type: 'result'; result: RunResult<TOutput> };

/** Options of {@link enableTracing}; unset ones come from the `OTEL_*` environment variables. */
export interface TracingOptions {
  /** OTLP/HTTP base URL, e.g. `http://localhost:4318` (`/v1/traces` is appended). */
  endpoint?: string;
  /** Extra HTTP headers of every export (never recorded on a span). */
  headers?: Record<string, string>;
  /** The `service.name` resource attribute. */
  serviceName?: string;
  /** Records tool arguments/results and model messages on the spans (default false). */
  captureContent?: boolean;
}

/**
 * Records OpenTelemetry GenAI spans of every run (`invoke_agent`, `chat`, `execute_tool`)
 * and exports them over OTLP HTTP/protobuf. With `@opentelemetry/api` installed, a run
 * started inside an active span becomes its child. Remaining spans are exported before exit.
 */
export declare function enableTracing(options?: TracingOptions): void;
/** Exports every span ended so far. */
export declare function flushTracing(): Promise<void>;
/** Exports what is left and turns tracing off. */
export declare function shutdownTracing(): Promise<void>;
