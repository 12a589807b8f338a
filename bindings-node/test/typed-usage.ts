// Checked with `tsc --noEmit --strict`: the declarations in index.d.ts describe real use.
import {
  AgentContinueError,
  AgentError,
  createAgent,
  createScriptedClient,
  defineTool,
  jsonSchemaValidator,
  stepCountIs,
  type AgentEvent,
  type JsonValue,
  type ModelRequest,
  type RunResult,
  type ToolChoice,
  type ToolContext,
} from '@phaseo/agent-sdk';

interface Ticket { ticketId: string }
interface AppContext { user: string }

const lookup = defineTool<Ticket, { status: string }, AppContext>({
  id: 'lookup',
  description: 'Load a ticket',
  parameters: { type: 'object', properties: { ticketId: { type: 'string' } }, required: ['ticketId'] },
  timeoutMs: 1000,
  async execute(input: Ticket, context: ToolContext<AppContext, Ticket>) {
    context.emitProgress({ phase: 'lookup' });
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
  toolExecution: { toolConcurrency: 2, onError: 'return-to-model', maxOutputChars: 2000 },
  modelRetry: { maxRetries: 1, backoffMs: 10 },
});

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
