// Checked with `tsc --noEmit --strict`: the declarations in index.d.ts describe real use.
import {
  AgentContinueError,
  AgentError,
  createAgent,
  createScriptedClient,
  defineTool,
  enableTracing,
  flushTracing,
  shutdownTracing,
  jsonSchemaValidator,
  stepCountIs,
  type AgentEvent,
  type JsonValue,
  type ModelRequest,
  type RunResult,
  type ToolChoice,
  type ToolContext,
  type ToolRetry,
  type ToolRetryingEvent,
  type ToolInputStartedEvent,
  type ToolInputDeltaEvent,
} from '@phaseo/agent-sdk';

interface Ticket { ticketId: string }
interface AppContext { user: string }

const lookup = defineTool<Ticket, { status: string }, AppContext>({
  id: 'lookup',
  description: 'Load a ticket',
  parameters: { type: 'object', properties: { ticketId: { type: 'string' } }, required: ['ticketId'] },
  timeoutMs: 1000,
  maxCalls: 3,
  retry: { maxAttempts: 2, backoffMs: 100 } satisfies ToolRetry,
  deferLoading: false,
  async execute(input: Ticket, context: ToolContext<AppContext, Ticket>) {
    const attempt: number = context.attempt;
    const key: string = context.idempotencyKey;
    context.emitProgress({ phase: 'lookup', attempt, key });
    if (context.signal.aborted) throw new Error('cancelled');
    return { status: `${input.ticketId} for ${context.context.user}` };
  },
});

const refund = defineTool<{ amount: number }>({
  id: 'refund',
  requireApproval: (input) => input.amount > 100,
  outputSchema: jsonSchemaValidator({ type: 'object' }),
  async *execute(input) {
    yield { percent: 50 };
    return { refunded: input.amount };
  },
});

const manual = defineTool({ id: 'escalate', execute: false, onResponseReceived: (output) => ({ answer: output }) });

const agent = createAgent<AppContext, string>({
  id: 'desk',
  instructions: (turn) => `turn ${turn.numberOfTurns}`,
  tools: [lookup, refund, manual],
  stopWhen: [stepCountIs(5), (state) => state.usage.totalTokens > 1000],
  toolExecution: { toolConcurrency: 2, onError: 'return-to-model', maxOutputChars: 2000, maxToolCalls: 20 },
  modelRetry: { maxRetries: 1, backoffMs: 10 },
});

/** The typed form of a `tool.retrying` event. */
export function retryingAttempt(event: AgentEvent): number | null {
  if (event.type !== 'tool.retrying') return null;
  const retrying = event as ToolRetryingEvent;
  return retrying.attempt;
}

/** A call's arguments as the model wrote them, from `tool.input_*` events. */
export function inputSoFar(events: AgentEvent[], toolCallId: string): { toolName?: string; text: string } {
  let toolName: string | undefined;
  let text = '';
  for (const event of events) {
    if (event.type === 'tool.input_started' && (event as ToolInputStartedEvent).toolCallId === toolCallId) {
      toolName = (event as ToolInputStartedEvent).toolName;
    } else if (event.type === 'tool.input_delta') {
      const delta = event as ToolInputDeltaEvent;
      if (delta.toolCallId === toolCallId) text += delta.delta;
    }
  }
  return { toolName, text };
}

const host = {
  async generate(request: ModelRequest) {
    return { text: `${request.messages.length} messages` };
  },
};

export async function main(): Promise<string> {
  const events: AgentEvent[] = [];
  const controller = new AbortController();
  const result: RunResult<string> = await agent.run({ input: 'hi', client: host, context: { user: 'ana' }, signal: controller.signal, onEvent: (e) => { events.push(e); } });
  const text: string = JSON.stringify(result);
  try {
    await agent.continueRun({ state: text, client: createScriptedClient([{ text: 'ok' }]), approvals: ['c1', { toolCallId: 'c2', reason: 'fine' }], toolOutputs: [{ toolCallId: 'c3', output: 1 }] });
    await agent.continueRun({ state: text, client: createScriptedClient([{ text: 'ok' }]), approvals: [{ toolCallId: 'c4', editedInput: { ticketId: 'T-2' } }], responses: [{ toolCallId: 'c5', output: { status: 'done' } }], toolExecution: { maxToolCalls: 5 } });
  } catch (error) {
    if (error instanceof AgentContinueError) return error.code;
    if (error instanceof AgentError && error.result) return error.result.run.status;
  }
  const stream = agent.stream({ input: 'again', client: createScriptedClient([{ text: 'streamed' }]) });
  for await (const delta of stream.getTextStream()) events.push({ type: 'delta', runId: '', agentId: '', timestamp: '', delta });
  const final = await stream;
  const choice: ToolChoice = { toolId: 'lookup' };
  await createAgent({ id: 'strict', tools: [defineTool({ id: 's', parameters: { type: 'object', additionalProperties: false }, strict: true, inputExamples: [{}] })], toolChoice: (turn) => (turn.stepIndex === 0 ? 'required' : null), parallelToolCalls: false, activeTools: ['s'] })
    .run({ input: 'x', client: host, toolChoice: choice, parallelToolCalls: true, activeTools: [] })
    .catch(() => undefined);
  return `${final.run.status} ${final.output ?? ''} ${result.usage.totalTokens} ${events.length}`;
}

// Integers beyond 2^53 − 1 are bigint values.
export const exactCounter: JsonValue = { counter: 18446744073709551615n, nested: [9007199254740993n, 1] };

// The product's names: `tool`, its type names, `preset`/`models`/`parseOutput`, tool
// objects in `nextTurnParams.tools`, `approveToolCalls`, `result.messages`.
import {
  tool,
  type AgentTool,
  type AgentRuntimeContext,
  type AgentRunResult,
  type AgentRunOptions,
  type AgentContinueOptions,
  type AgentModelClient,
  type AgentModelRequest,
  type AgentModelResponse,
  type AgentModelStreamEvent,
  type AgentMessage,
  type AgentItem,
  type AgentToolCallItem,
  type AgentUsageSummary,
  type AgentRunStatus,
  type AgentToolDecision,
  type AgentToolOutput,
  type AgentStopCondition,
  type AgentModelRetryConfig,
  type AgentToolExecutionConfig,
  type AgentSchema,
  type AgentHumanReviewRequest,
  type AgentStreamEvent,
  type AgentStepResult,
  type HostModelClient,
} from '@phaseo/agent-sdk';

const weatherSchema: AgentSchema<{ city: string }> = (v: unknown) => v as { city: string };
const weather: AgentTool<{ city: string }, string> = {
  id: 'weather',
  inputSchema: weatherSchema,
  execute: (input: { city: string }, context: AgentRuntimeContext) => `${input.city} ${context.runId}`,
};
const weatherTool = tool(weather);
const planner = tool({ id: 'plan', execute: () => 'ok', nextTurnParams: { tools: [weatherTool, 'plan'] } });
const retry: AgentModelRetryConfig = { maxRetries: 2, backoffMs: 5 };
const execution: AgentToolExecutionConfig = { toolConcurrency: 2 };
const stopAt: AgentStopCondition = stepCountIs(3);
const productAgent = createAgent({
  id: 'ported',
  preset: 'support',
  models: ['m1', 'm2'],
  parseOutput: (text: string) => text.length,
  tools: [weatherTool, planner],
  modelRetry: retry,
  toolExecution: execution,
  stopWhen: stopAt,
  humanReview: (): AgentHumanReviewRequest | null => null,
});

const fnClient: HostModelClient = (request: AgentModelRequest): AgentModelResponse => ({ text: request.agentId });
const streamingClient: AgentModelClient = {
  generate: async (): Promise<AgentModelResponse> => ({ message: { content: 'hi', toolCalls: [{ id: 'c1', name: 'weather', input: { city: 'Oslo' } }] } }),
  async *stream(): AsyncGenerator<AgentModelStreamEvent> {
    yield { type: 'reasoning-delta', delta: 'thinking' };
    yield { type: 'text-delta', delta: 'hi' };
    yield { type: 'tool-input-start', toolCallId: 'c1', toolName: 'weather' };
    yield { type: 'tool-input-delta', toolCallId: 'c1', delta: '{"city":"Oslo"}' };
    yield { type: 'item', item: { type: 'message', role: 'assistant', content: 'hi' } };
    yield { type: 'response', response: { text: 'hi' } };
  },
};

export async function ported(): Promise<number> {
  const options: AgentRunOptions = { input: 'x', client: fnClient, preset: 'fast', models: ['r1'] };
  const result: AgentRunResult = await productAgent.run(options);
  const messages: AgentMessage[] = result.messages;
  const status: AgentRunStatus = result.run.status;
  const usage: AgentUsageSummary = result.usage;
  const steps: AgentStepResult[] = result.stepResults;
  const approve: AgentToolDecision[] = ['c1'];
  const outputs: AgentToolOutput[] = [{ toolCallId: 'c2', output: { ok: true } }];
  const more: AgentContinueOptions = { run: result, client: streamingClient, approveToolCalls: approve, rejectToolCalls: [{ toolCallId: 'c3', reason: 'no' }], toolOutputs: outputs };
  await productAgent.continueRun(more);
  const calls: AgentToolCallItem[] = result.items.filter((i: AgentItem): i is AgentToolCallItem => i.type === 'tool_call');
  let seen = 0;
  for await (const event of productAgent.stream({ input: 'y', client: streamingClient }).getFullStream()) {
    const e: AgentStreamEvent = event;
    if (e.type !== 'result') seen++;
  }
  return messages.length + status.length + usage.totalTokens + steps.length + calls.length + seen;
}

import { createGatewayAgentClient, type GatewayAgentClientOptions } from '@phaseo/agent-sdk';
const gatewayOptions: GatewayAgentClientOptions = {
  clientOptions: { apiKey: 'sk', baseURL: 'http://localhost:1/v1', timeoutMs: 1000, headers: { a: 'b' } },
  preset: 'support',
  toolChoice: 'auto',
  parallelToolCalls: false,
  responseFormat: { type: 'json_object' },
  requestOptions: { store: true },
};
export const gateway = createGatewayAgentClient(gatewayOptions);

import {
  AgentLeaseLostError, AgentStoreError, createInMemoryRunStore, createPostgresRunStore, createSqliteRunStore,
  type RunPage, type RunStore, type StateAccessor, type StoredRun,
} from '@phaseo/agent-sdk';

export async function durable(): Promise<number> {
  const store: RunStore = createSqliteRunStore('/tmp/runs.db');
  const pg: RunStore = await createPostgresRunStore('postgres://u@127.0.0.1/db');
  const agent = createAgent({ id: 'durable', store, lease: { durationMs: 5000, renewEveryMs: 1000 } });
  const paused = await agent.run({ input: 'x', client: createScriptedClient([{ text: 'hi' }]) });
  const page: RunPage = await store.list({ status: 'waiting_for_human', agentId: 'durable', limit: 10, cursor: page0() });
  const inbox: StoredRun[] = page.runs;
  const pendingIds: string[] = inbox.flatMap((r) => r.pending.map((p) => p.call.id));
  try {
    await agent.continueRun({ runId: paused.run.id, client: createScriptedClient([]), approvals: pendingIds, store: pg });
    await agent.recover(paused.run.id, { client: createScriptedClient([]) });
    await agent.recover({ runId: paused.run.id, client: createScriptedClient([]) });
  } catch (e) {
    if (e instanceof AgentStoreError || e instanceof AgentLeaseLostError) return 0;
  }
  const saved = new Map<string, RunResult>();
  const accessor: StateAccessor = { load: (id) => saved.get(id) ?? null, save: (state) => { saved.set(state.run.id, state); } };
  await agent.run({ input: 'x', client: createScriptedClient([{ text: 'hi' }]), state: accessor });
  await agent.continueRun({ runId: paused.run.id, state: accessor, client: createScriptedClient([]) });
  const removed: number = await store.prune(['completed', 'failed'], { olderThan: new Date(Date.now() - 86_400_000) });
  const deleted: boolean = await createInMemoryRunStore().delete(paused.run.id);
  const loaded: StoredRun | null = await store.load(paused.run.id);
  return removed + (deleted ? 1 : 0) + (loaded ? loaded.version : 0);
}

function page0(): string | null {
  return null;
}

import {
  AgentMcpError,
  createMcpServer,
  type McpServer,
  type McpToolInfo,
} from '@phaseo/agent-sdk';

export async function mcp(): Promise<string> {
  const keep = (tool: McpToolInfo): boolean => tool.annotations.readOnlyHint === true || tool.name === 'delete_file';
  const files: McpServer = createMcpServer({ name: 'files', command: 'python3', args: ['server.py'], env: { LOG: '0' }, cwd: '/tmp' }, {
    toolPrefix: 'fs', denyTools: ['crash'], filter: keep, requireApproval: 'destructive', timeoutMs: 5000,
    toolTimeouts: { slow: 300 }, onError: 'return-to-model', cacheTtlMs: 60_000, optional: true, deferLoading: true,
    onElicitation: async (request, context) => (request.message && context.server ? { action: 'decline' } : { action: 'cancel' }),
  });
  const remote = createMcpServer({ name: 'remote', url: 'http://127.0.0.1:3001/mcp', headers: { 'X-Team': 'a' }, bearerToken: 't' }, {
    allowTools: ['search'],
    requireApproval: (call, context) => call.name === 'search' && context.toolAnnotations?.readOnlyHint !== true,
  });
  await using agent = createAgent({ id: 'mcp', mcpServers: [files, remote] });
  try {
    await agent.run({ input: 'x', client: createScriptedClient([{ text: 'hi' }]) });
  } catch (e) {
    if (e instanceof AgentMcpError) return e.code;
  }
  await agent.close();
  return `${files.name} ${remote.transport}`;
}

// Tracing: every option is optional; flush and shutdown are promises.
export function traced(): Promise<void> {
  enableTracing({ endpoint: 'http://localhost:4318', headers: { authorization: 'Bearer x' }, serviceName: 'svc', captureContent: false });
  enableTracing();
  return flushTracing().then(() => shutdownTracing());
}

// Agents as tools (docs/behaviour.md §18): the tool another agent takes; nested events name
// their parent call.
import { type AsToolOptions, type Tool as AgentAsTool } from '@phaseo/agent-sdk';
export async function agentAsTool(): Promise<string | undefined> {
  const nested = createAgent({ id: 'researcher' });
  const options: AsToolOptions = { id: 'research', description: 'Researches', parameters: { type: 'object' } };
  const tool: AgentAsTool = nested.asTool(options);
  const outer = createAgent({ id: 'boss', tools: [tool, nested.asTool()] });
  let parent: string | undefined;
  await outer.run({ input: 'x', client: createScriptedClient([{ text: 'hi' }]), onEvent: (e) => { parent = e.parentToolCallId; } });
  return parent;
}

// Tools from a Standard Schema (docs/behaviour.md §20): `execute`'s input is inferred from
// the schema's output type.
import { z } from 'zod';
import { defineTool as defineTypedTool, type StandardSchemaV1 } from '@phaseo/agent-sdk';

const Order = z.object({
  customer: z.object({ id: z.string(), name: z.string() }),
  items: z.array(z.object({ sku: z.string(), quantity: z.number().int().min(1) })),
  shipping: z.enum(['standard', 'express']),
  note: z.string().optional(),
  giftWrap: z.boolean().default(false),
});

export const placeOrder = defineTypedTool({
  id: 'place_order',
  inputSchema: Order,
  strict: true,
  execute: (order) => {
    const units: number = order.items.reduce((n, item) => n + item.quantity, 0);
    const shipping: 'standard' | 'express' = order.shipping;
    const wrapped: boolean = order.giftWrap;
    const note: string | undefined = order.note;
    return { orderId: `O-${order.customer.id}`, units, shipping, wrapped, note };
  },
});

// @ts-expect-error: the inferred input has no `nope`.
defineTypedTool({ id: 'wrong', inputSchema: Order, execute: (order) => order.nope });

// Any Standard Schema, not only zod: a hand-made one infers the same way.
declare const city: StandardSchemaV1<unknown, { city: string }>;
defineTypedTool({ id: 'weather', inputSchema: city, execute: (input) => input.city.toUpperCase() });

import { serveMcp, type McpServeOptions, type McpToolServer } from '@phaseo/agent-sdk';

export async function served(): Promise<string | null> {
  const options: McpServeOptions = {
    tools: [{ id: 'add', description: 'Adds', execute: (input: { a: number; b: number }) => input.a + input.b }],
    name: 'calc',
    version: '1.0.0',
    transport: { type: 'http', port: 0, authToken: 't', allowedOrigins: ['http://localhost:3000'] },
    toolExecution: { toolConcurrency: 2, maxToolCalls: 10 },
  };
  const server: McpToolServer = await serveMcp(options);
  const url: string | null = server.url;
  await server.close();
  await server.closed;
  await server[Symbol.asyncDispose]();
  const stdio = await serveMcp({ tools: [], name: 'x', transport: 'stdio' });
  await stdio.close();
  return url;
}

// One agent served as a single tool, with the client its runs use.
export async function servedAgent(): Promise<void> {
  const researcher = createAgent({ id: 'researcher', tools: [] });
  const server: McpToolServer = await serveMcp({
    agent: researcher,
    client: createScriptedClient([{ text: 'researched' }]),
    description: 'Researches',
    name: 'research',
    transport: 'http',
  });
  await server.close();
}
