import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AgentDefinitionError, AgentStateError, createAgent, createScriptedClient, defineTool } from '../index.mjs';
import { call, calls } from './helpers.mjs';

const gated = (stateSecret) => createAgent({
  id: 'ops', stateSecret, tools: [defineTool({ id: 'deploy', execute: () => 'deployed', requireApproval: true })],
});

test('stateSecret signs the state; an edited or unsigned state is refused', async () => {
  const agent = gated('s3cret');
  const paused = await agent.run({ input: 'go', client: createScriptedClient([calls(call('c1', 'deploy'))]) });
  assert.match(paused.signature, /^[0-9a-f]{64}$/);
  const tampered = { ...paused, run: { ...paused.run, context: { role: 'admin' } } };
  await assert.rejects(agent.continueRun({ state: tampered, client: createScriptedClient([]), approvals: ['c1'] }),
    (e) => e instanceof AgentStateError && e.code === 'state_invalid' && e.message === 'State signature does not match');
  const { signature, ...stripped } = paused;
  assert.ok(signature);
  await assert.rejects(agent.continueRun({ state: stripped, client: createScriptedClient([]), approvals: ['c1'] }),
    (e) => e.code === 'state_invalid' && e.message === 'State signature is missing');
  // A list rotates: the first secret signs, any verifies.
  const done = await gated(['new', 's3cret']).continueRun({
    state: JSON.stringify(paused), client: createScriptedClient([{ text: 'ok' }]), approvals: ['c1'],
  });
  assert.equal(done.run.status, 'completed');
  assert.notEqual(done.signature, paused.signature);
  assert.throws(() => gated(42), AgentDefinitionError);
});
