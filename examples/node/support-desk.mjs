// The support-desk demo in Node: three tools on the offline test client, a pause for
// approval and a manual step, and a continue from the state's JSON text.
//
//   node examples/node/support-desk.mjs
import { createAgent, createGatewayAgentClient, createOpenAICompatibleClient, createTestClient, defineTool } from '../../bindings-node/index.mjs';

/** A real model when the environment names one (PHASEO_API_KEY: the Phaseo gateway;
 * OPENAI_BASE_URL: an OpenAI-compatible server), else the offline test client. */
function clientFromEnv() {
  if (process.env.PHASEO_API_KEY) {
    console.log('model: Phaseo gateway');
    return createGatewayAgentClient({ model: process.env.PHASEO_MODEL || undefined });
  }
  if (process.env.OPENAI_BASE_URL) {
    console.log('model: OpenAI-compatible server');
    return createOpenAICompatibleClient({ model: process.env.OPENAI_MODEL || undefined });
  }
  console.log('model: offline test client (set PHASEO_API_KEY or OPENAI_BASE_URL for a real one)');
  return createTestClient();
}

const lookupTicket = defineTool({
  id: 'lookup_ticket',
  description: 'Load a support ticket by id.',
  parameters: { type: 'object', properties: { ticketId: { type: 'string', examples: ['T-1001'] } }, required: ['ticketId'], additionalProperties: false },
  timeoutMs: 2000,
  async *execute(input, context) {
    yield { phase: 'searching' };
    await new Promise((resolve) => setTimeout(resolve, 20));
    yield { phase: 'found' };
    return { ticketId: input.ticketId, customer: 'Ana', status: 'open', paid: 150, run: context.runId.slice(0, 8) };
  },
});

const issueRefund = defineTool({
  id: 'issue_refund',
  description: "Refund a ticket's customer. Amounts over 100 need a person's approval.",
  parameters: {
    type: 'object',
    properties: { ticketId: { type: 'string', examples: ['T-1001'] }, amount: { type: 'number', minimum: 0, examples: [150] } },
    required: ['ticketId', 'amount'],
    additionalProperties: false,
  },
  requireApproval: (input) => input.amount > 100,
  execute: (input, context) => ({ refunded: input.amount, idempotencyKey: context.toolCall.id }),
});

const escalate = defineTool({
  id: 'escalate',
  description: 'Hand the ticket to a human specialist, who answers later.',
  parameters: {
    type: 'object',
    properties: { ticketId: { type: 'string', examples: ['T-1001'] }, reason: { type: 'string', examples: ['customer asked for a manager'] } },
    required: ['ticketId', 'reason'],
  },
  execute: false,
});

function printEvent(event) {
  let detail = '';
  if (event.type.startsWith('tool.')) {
    detail = ` ${event.toolName}`;
    if ('result' in event) detail += ` progress ${JSON.stringify(event.result)}`;
    if ('output' in event) detail += ` -> ${JSON.stringify(event.output)}`;
  } else if (event.type === 'run.waiting_for_human') {
    detail = ` (${event.pause.kind})`;
  }
  console.log(`  event ${event.type}${detail}`);
}

const agent = createAgent({ id: 'support-desk', instructions: 'You resolve support tickets.', tools: [lookupTicket, issueRefund, escalate] });
const client = clientFromEnv();

console.log('== run');
const paused = await agent.run({ input: 'Ticket T-1001: the customer wants a refund of 150.', client, context: { operator: 'demo' }, onEvent: printEvent });
console.log(`status: ${paused.run.status}`);
if (paused.run.status !== 'waiting_for_human') {
  console.log(`answer: ${paused.output}`);
  process.exit(0);
}
for (const p of paused.run.pause.pendingToolCalls) console.log(`pending: ${p.call.id} ${p.call.name} ${JSON.stringify(p.call.input)} (${p.reason})`);

const stored = JSON.stringify(paused); // an application stores this text and continues later, anywhere
console.log(`stored state: ${stored.length} bytes`);
const pending = JSON.parse(stored).run.pause.pendingToolCalls;
console.log('== continue');
const done = await agent.continueRun({
  state: stored,
  client,
  approvals: pending.filter((p) => p.call.name === 'issue_refund').map((p) => p.call.id),
  toolOutputs: pending.filter((p) => p.call.name === 'escalate').map((p) => ({ toolCallId: p.call.id, output: { assignedTo: 'Berta', eta: '2h' } })),
  onEvent: printEvent,
});
console.log(`status: ${done.run.status}`);
console.log(`answer: ${done.output}`);
