import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AgentDefinitionError, createAgent, defineTool } from '../index.mjs';
import { call, calls, RecordingClient } from './helpers.mjs';

for (const execute of [false, undefined, null]) {
  test(`execute: ${execute} makes a manual tool: the run pauses, the supplied output answers the model`, async () => {
    const agent = createAgent({ id: 'desk', tools: [defineTool({ id: 'lookup', parameters: { type: 'object' }, execute })] });
    const client = new RecordingClient([calls(call('c1', 'lookup', { number: 'INV-7' })), { text: 'Invoice found.' }]);
    const events = [];
    const paused = await agent.run({ input: 'find INV-7', client, onEvent: (e) => events.push(e) });
    assert.equal(paused.run.status, 'waiting_for_human');
    assert.equal(paused.run.pause.kind, 'manual_tool');
    assert.deepEqual(paused.run.pause.pendingToolCalls.map((p) => [p.call.id, p.kind, p.reason]),
      [['c1', 'manual', 'Tool requires manual execution']]);
    assert.deepEqual(events.filter((e) => e.type.startsWith('tool.')), []);
    const done = await agent.continueRun({ state: JSON.stringify(paused), client, toolOutputs: [{ toolCallId: 'c1', output: { amount: 120 } }] });
    assert.equal(done.run.status, 'completed');
    assert.equal(done.output, 'Invoice found.');
    assert.deepEqual(client.requests[1].messages.filter((m) => m.role === 'tool').map((m) => [m.toolCallId, m.content]),
      [['c1', '{"amount":120}']]);
  });
}

test('an execute that is neither a function nor false is refused when defining', () => {
  for (const execute of [true, 'run', 3]) {
    assert.throws(() => defineTool({ id: 'lookup', execute }),
      (e) => e instanceof AgentDefinitionError && e.code === 'definition_invalid'
        && e.message === "Invalid definition of tool 'lookup': execute must be a function or false");
  }
});
