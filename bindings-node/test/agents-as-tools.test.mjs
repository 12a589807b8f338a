// An agent as a tool of another (docs/behaviour.md §18): defaults, nested events with their
// parent call, a nested approval decided on the outer continue from the stored state, and
// a nested failure as the outer call's tool error.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AgentContinueError, AgentDefinitionError, createAgent, defineTool } from '../index.mjs';
import { call, calls, RecordingClient } from './helpers.mjs';

function researcher() {
  const lookup = defineTool({ id: 'lookup', requireApproval: true, execute: async () => 'fact' });
  return createAgent({ id: 'researcher', tools: [lookup] });
}

test('a nested approval pauses the outer run as c1/n1 and the outer continue completes it', async () => {
  const tool = researcher().asTool({ description: 'Researches' });
  assert.equal(tool.id, 'researcher');
  assert.deepEqual(tool.parameters, { type: 'object', properties: { input: { type: 'string' } }, required: ['input'] });
  const boss = createAgent({ id: 'boss', tools: [tool] });
  const client = new RecordingClient([calls(call('c1', 'researcher', { input: 'topic' })), calls(call('n1', 'lookup', {})),
    { text: 'inner done' }, { text: 'All done.' }]);
  const paused = await boss.run({ input: 'study', client });
  assert.equal(paused.run.status, 'waiting_for_human');
  assert.deepEqual(paused.run.pause.pendingToolCalls.map((p) => [p.call.id, p.call.name, p.kind]), [['c1/n1', 'lookup', 'approval']]);
  await assert.rejects(boss.continueRun({ state: JSON.stringify(paused), client, approvals: ['c1/n9'] }),
    (e) => e instanceof AgentContinueError && e.message === 'Unknown tool call c1/n9');
  const events = [];
  const done = await boss.continueRun({ state: JSON.stringify(paused), client, approvals: ['c1/n1'], onEvent: (e) => events.push(e) });
  assert.equal(done.output, 'All done.');
  const nested = events.filter((e) => e.parentToolCallId === 'c1').map((e) => e.type);
  assert.equal(nested.at(-1), 'run.completed');
  assert.ok(nested.includes('tool.completed'));
});

test('a failed nested run is a tool error of the outer call; nesting deeper than 8 is refused', async () => {
  const nested = createAgent({ id: 'researcher', tools: [defineTool({ id: 'lookup', execute: async () => { throw new Error('index offline'); } })] });
  const boss = createAgent({ id: 'boss', tools: [nested.asTool({ id: 'research' })], toolExecution: { onError: 'return-to-model' } });
  const client = new RecordingClient([calls(call('c1', 'research', { input: 'q' })), calls(call('n1', 'lookup', {})), { text: 'Sorry.' }]);
  const done = await boss.run({ input: 'go', client });
  assert.equal(done.output, 'Sorry.');
  const last = client.requests.at(-1).messages.at(-1);
  assert.deepEqual([last.toolCallId, last.isError, JSON.parse(last.content)], ['c1', true, { error: 'index offline' }]);

  let agent = createAgent({ id: 'a0' });
  for (let level = 1; level <= 8; level += 1) agent = createAgent({ id: `a${level}`, tools: [agent.asTool()] });
  assert.throws(() => agent.asTool(), (e) => e instanceof AgentDefinitionError && /agents nest 9 levels deep as tools, more than 8/.test(e.message));
  assert.throws(() => agent.asTool({ name: 'x' }), (e) => e instanceof AgentDefinitionError && /asTool: unknown key 'name'/.test(e.message));
});
