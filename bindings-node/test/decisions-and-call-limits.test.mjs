// Approvals with an edited input, responses instead of running, call budgets, retries and
// the context's attempt and idempotency key (docs/behaviour.md §14, §15).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AgentContinueError, AgentDefinitionError, createAgent, defineTool } from '../index.mjs';
import { call, calls, RecordingClient } from './helpers.mjs';

const DEPLOY_PARAMETERS = {
  type: 'object',
  properties: { environment: { type: 'string', enum: ['staging', 'production'] } },
  required: ['environment'],
  additionalProperties: false,
};

function deployAgent(ran) {
  const deploy = defineTool({
    id: 'deploy',
    parameters: DEPLOY_PARAMETERS,
    requireApproval: true,
    execute: async (input) => {
      ran.push(input);
      return { deployed: input.environment };
    },
  });
  return createAgent({ id: 'deployer', tools: [deploy] });
}

const toolMessages = (request) => request.messages.filter((m) => m.role === 'tool')
  .map((m) => [m.toolCallId, JSON.parse(m.content)]);

test('an approval with an edited input runs the tool with it, and the history shows it', async () => {
  const ran = [];
  const agent = deployAgent(ran);
  const client = new RecordingClient([calls(call('c1', 'deploy', { environment: 'production' })), { text: 'Deployed to staging.' }]);
  const events = [];
  const paused = await agent.run({ input: 'deploy it', client });

  const done = await agent.continueRun({
    state: JSON.stringify(paused), client, onEvent: (e) => events.push(e),
    approvals: [{ toolCallId: 'c1', editedInput: { environment: 'staging' } }],
  });

  assert.equal(done.run.status, 'completed');
  assert.equal(done.output, 'Deployed to staging.');
  assert.deepEqual(ran, [{ environment: 'staging' }]);
  assert.equal(events.find((e) => e.type === 'tool.started').inputEdited, true);
  const assistant = client.requests[1].messages.filter((m) => m.toolCalls?.length).at(-1);
  assert.deepEqual(assistant.toolCalls.map((c) => [c.id, c.input]), [['c1', { environment: 'staging' }]]);
  assert.deepEqual(toolMessages(client.requests[1]), [['c1', { deployed: 'staging' }]]);
  const result = done.stepResults[0].toolResults[0];
  assert.deepEqual(result.input, { environment: 'staging' });
  assert.deepEqual(result.originalInput, { environment: 'production' });
});

test('an invalid edited input is refused and the state stays usable', async () => {
  const ran = [];
  const agent = deployAgent(ran);
  const client = new RecordingClient([calls(call('c1', 'deploy', { environment: 'production' })), { text: 'Deployed.' }]);
  const saved = JSON.stringify(await agent.run({ input: 'deploy it', client }));

  await assert.rejects(
    agent.continueRun({ state: saved, client, approvals: [{ toolCallId: 'c1', editedInput: { environment: 'moon' } }] }),
    (e) => e instanceof AgentContinueError && e.code === 'continue_invalid'
      && e.message.includes('Edited input for tool call c1 is invalid'),
  );
  assert.deepEqual(ran, []);

  const done = await agent.continueRun({ state: saved, client, approvals: ['c1'] });
  assert.equal(done.run.status, 'completed');
  assert.deepEqual(ran, [{ environment: 'production' }]);
});

test('a response answers in place of the tool, which never runs', async () => {
  const ran = [];
  const agent = deployAgent(ran);
  const client = new RecordingClient([calls(call('c1', 'deploy', { environment: 'production' })), { text: 'Skipped.' }]);
  const events = [];
  const paused = await agent.run({ input: 'deploy it', client });

  const done = await agent.continueRun({
    state: paused, client, onEvent: (e) => events.push(e),
    responses: [{ toolCallId: 'c1', output: { deployed: 'by hand' } }],
  });

  assert.equal(done.run.status, 'completed');
  assert.deepEqual(ran, []);
  assert.deepEqual(toolMessages(client.requests[1]), [['c1', { deployed: 'by hand' }]]);
  const toolEvents = events.filter((e) => e.type.startsWith('tool.'));
  assert.deepEqual(toolEvents.map((e) => e.type), ['tool.completed']);
  assert.equal(toolEvents[0].respondedByHuman, true);
});

test('a response for a call that is not waiting for approval is refused', async () => {
  const agent = createAgent({ id: 'desk', tools: [defineTool({ id: 'lookup', execute: false })] });
  const client = new RecordingClient([calls(call('c1', 'lookup'))]);
  const paused = await agent.run({ input: 'look', client });
  await assert.rejects(
    agent.continueRun({ state: paused, client, responses: [{ toolCallId: 'c1', output: 1 }] }),
    (e) => e instanceof AgentContinueError && e.message.includes('Tool call c1 is not waiting for approval'),
  );
});

test('a call beyond its tool\'s maxCalls is refused and the model sees why', async () => {
  const ran = [];
  const ping = defineTool({ id: 'ping', maxCalls: 1, execute: async (_input, context) => { ran.push(context.toolCall.id); return { pong: true }; } });
  const agent = createAgent({ id: 'pinger', tools: [ping] });
  const client = new RecordingClient([calls(call('c1', 'ping'), call('c2', 'ping')), { text: 'Done.' }]);
  const events = [];

  const done = await agent.run({ input: 'ping twice', client, onEvent: (e) => events.push(e) });

  assert.equal(done.run.status, 'completed');
  assert.deepEqual(ran, ['c1']);
  assert.deepEqual(toolMessages(client.requests[1]),
    [['c1', { pong: true }], ['c2', { error: 'Tool ping may be called at most 1 times in a run' }]]);
  assert.deepEqual(events.filter((e) => e.toolCallId === 'c2').map((e) => e.type), ['tool.failed']);
});

test('bad limits are refused with the core\'s message', () => {
  const cases = [
    [{ maxCalls: 0 }, "tool 't': maxCalls must be a whole number of at least 1, got 0"],
    [{ maxCalls: 1.5 }, "tool 't': maxCalls must be a whole number of at least 1, got 1.5"],
    [{ retry: { maxAttempts: 0 } }, "tool 't': retry.maxAttempts must be a whole number of at least 1, got 0"],
    [{ retry: { maxAttempts: 2, backoffMs: -1 } }, "tool 't': retry.backoffMs must be a non-negative number"],
    [{ retry: { attempts: 2 } }, 'retry: unknown field `attempts`'],
  ];
  for (const [fields, message] of cases) {
    assert.throws(() => defineTool({ id: 't', execute: () => null, ...fields }),
      (e) => e instanceof AgentDefinitionError && e.code === 'definition_invalid' && e.message.includes(message),
      JSON.stringify(fields));
  }
  assert.throws(() => createAgent({ id: 'a', toolExecution: { maxToolCalls: 0 } }),
    (e) => e instanceof AgentDefinitionError && e.message.includes('toolExecution.maxToolCalls must be a whole number of at least 1, got 0'));
});

test('a run\'s toolExecution.maxToolCalls overrides the agent\'s', async () => {
  const ran = [];
  const ping = defineTool({ id: 'ping', execute: (_input, context) => { ran.push(context.toolCall.id); return { pong: true }; } });
  const agent = createAgent({ id: 'pinger', tools: [ping], toolExecution: { maxToolCalls: 5 } });
  const client = new RecordingClient([calls(call('c1', 'ping'), call('c2', 'ping'), call('c3', 'ping')), { text: 'Done.' }]);

  const done = await agent.run({ input: 'ping', client, toolExecution: { maxToolCalls: 2 } });

  assert.equal(done.run.status, 'completed');
  assert.deepEqual(ran, ['c1', 'c2']);
  assert.deepEqual(toolMessages(client.requests[1])[2], ['c3', { error: 'A run may make at most 2 tool calls' }]);
});

test('a retried call sees its attempts and one idempotency key', async () => {
  const seen = [];
  const charge = defineTool({
    id: 'charge',
    retry: { maxAttempts: 3, backoffMs: 1 },
    execute: async (_input, context) => {
      seen.push([context.attempt, context.idempotencyKey]);
      if (context.attempt < 3) throw new Error('gateway busy');
      return 'charged';
    },
  });
  const agent = createAgent({ id: 'till', tools: [charge] });
  const client = new RecordingClient([calls(call('c1', 'charge')), { text: 'Paid.' }]);
  const events = [];

  const done = await agent.run({ input: 'charge', client, onEvent: (e) => events.push(e) });

  assert.equal(done.run.status, 'completed');
  const key = `${done.run.id}:c1`;
  assert.deepEqual(seen, [[1, key], [2, key], [3, key]]);
  const toolEvents = events.filter((e) => e.type.startsWith('tool.'));
  assert.deepEqual(toolEvents.map((e) => e.type), ['tool.started', 'tool.retrying', 'tool.retrying', 'tool.completed']);
  const retrying = toolEvents.filter((e) => e.type === 'tool.retrying');
  assert.deepEqual(retrying.map((e) => [e.toolCallId, e.toolName, e.attempt]), [['c1', 'charge', 2], ['c1', 'charge', 3]]);
  assert.ok(retrying.every((e) => e.error.includes('gateway busy')));
});

test('hooks see attempt 1 and the idempotency key too', async () => {
  const seen = [];
  const deploy = defineTool({
    id: 'deploy',
    requireApproval: (_input, context) => { seen.push([context.attempt, context.idempotencyKey]); return false; },
    execute: async () => ({ ok: true }),
  });
  const agent = createAgent({ id: 'deployer', tools: [deploy] });
  const client = new RecordingClient([calls(call('c1', 'deploy')), { text: 'ok' }]);
  const done = await agent.run({ input: 'go', client });
  assert.deepEqual(seen, [[1, `${done.run.id}:c1`]]);
});
