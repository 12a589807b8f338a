// The product's names and shapes (`@phaseo/agent-sdk` of the Phaseo repository) work as
// the product documents them, next to ours.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import sdk, {
  AgentDefinitionError, AgentSchemaValidationError, createAgent, createScriptedClient, defineTool, parseState, tool,
} from '../index.mjs';
import { call, calls, RecordingClient } from './helpers.mjs';

test('tool is defineTool (ESM and CommonJS)', async () => {
  assert.equal(tool, defineTool);
  const { createRequire } = await import('node:module');
  const cjs = createRequire(import.meta.url)('../index.js');
  assert.equal(cjs.tool, cjs.defineTool);
  assert.equal(sdk.tool, defineTool);
  const echo = tool({ id: 'echo', execute: (input) => input });
  const agent = createAgent({ id: 'a', tools: [echo] });
  const result = await agent.run({ input: 'x', client: createScriptedClient([calls(call('c1', 'echo', { v: 1 })), { text: 'done' }]) });
  assert.deepEqual(result.stepResults[0].toolResults[0].result, { v: 1 });
});

test('nextTurnParams.tools takes tool objects as well as ids, static and from a function', async () => {
  const search = defineTool({ id: 'search', execute: () => 'found' });
  const fetchTool = defineTool({ id: 'fetch', execute: () => 'fetched' });
  const planStatic = defineTool({ id: 'plan', execute: () => 'planned', nextTurnParams: { tools: [search, 'fetch'] } });
  const planFn = defineTool({ id: 'plan2', execute: () => 'planned', nextTurnParams: async () => ({ tools: [fetchTool] }) });
  for (const [planner, expected] of [[planStatic, ['search', 'fetch']], [planFn, ['fetch']]]) {
    const agent = createAgent({ id: 'a', tools: [planner, search, fetchTool] });
    const client = new RecordingClient([calls(call('c1', planner.id)), { text: 'ok' }]);
    await agent.run({ input: 'go', client });
    assert.deepEqual(client.requests[0].tools.map((t) => t.id), [planner.id, 'search', 'fetch']);
    assert.deepEqual(client.requests[1].tools.map((t) => t.id), expected);
  }
});

test('preset names the model @<preset>; models gives the first; model wins over both', async () => {
  const cases = [
    [{ preset: 'support' }, {}, '@support'],
    [{ models: ['m1', 'm2'], preset: 'support' }, {}, 'm1'],
    [{ model: 'base', models: ['m1'], preset: 'support' }, {}, 'base'],
    [{ models: (turn) => [`turn-${turn.stepIndex}`] }, {}, 'turn-0'],
    [{ model: 'base' }, { preset: 'fast' }, '@fast'],
    [{ model: 'base' }, { models: ['r1', 'r2'] }, 'r1'],
    [{ model: 'base' }, { model: 'explicit', preset: 'fast' }, 'explicit'],
  ];
  for (const [definition, runOptions, expected] of cases) {
    const client = new RecordingClient([{ text: 'ok' }]);
    await createAgent({ id: 'a', ...definition }).run({ input: 'x', client, ...runOptions });
    assert.equal(client.requests[0].model, expected, JSON.stringify([definition, runOptions]));
  }
  assert.throws(() => createAgent({ id: 'a', preset: 3 }),
    (e) => e instanceof AgentDefinitionError && e.message === 'Invalid agent definition: preset must be a non-empty string');
  assert.throws(() => createAgent({ id: 'a', models: 'm1' }),
    (e) => e instanceof AgentDefinitionError && e.message === 'Invalid agent definition: models must be an array of strings, got "m1"');
  await assert.rejects(createAgent({ id: 'a' }).run({ input: 'x', client: new RecordingClient([]), models: [1] }),
    (e) => e instanceof AgentDefinitionError && e.message.startsWith('Invalid run options: models[0]:'));
  await assert.rejects(createAgent({ id: 'a' }).run({ input: 'x', client: new RecordingClient([]), preset: '' }),
    (e) => e instanceof AgentDefinitionError && e.message === 'Invalid run options: preset must be a non-empty string');
  // A per-turn `models` that answers something else fails the run, naming what it got.
  await assert.rejects(createAgent({ id: 'a', models: () => 7 }).run({ input: 'x', client: new RecordingClient([{ text: 'ok' }]) }),
    (e) => e.message.includes('models must be an array of strings, got 7'));
});

test('parseOutput turns the final text into the output, then outputSchema checks it', async () => {
  const parseOutput = (text) => ({ words: text.split(' ') });
  const plain = createAgent({ id: 'a', parseOutput });
  const result = await plain.run({ input: 'x', client: createScriptedClient([{ text: 'two words' }]) });
  assert.deepEqual(result.output, { words: ['two', 'words'] });

  const checked = createAgent({
    id: 'b',
    parseOutput,
    outputSchema: { type: 'object', properties: { words: { type: 'array', maxItems: 2 } } },
  });
  const ok = await checked.run({ input: 'x', client: createScriptedClient([{ text: 'a b' }]) });
  assert.deepEqual(ok.output, { words: ['a', 'b'] });
  await assert.rejects(checked.run({ input: 'x', client: createScriptedClient([{ text: 'a b c' }]) }),
    (e) => e instanceof AgentSchemaValidationError && e.code === 'agent_output_invalid' && e.result.run.status === 'failed');

  const throwing = createAgent({ id: 'c', parseOutput: () => { throw new Error('not a verdict'); } });
  await assert.rejects(throwing.run({ input: 'x', client: createScriptedClient([{ text: 'hm' }]) }),
    (e) => e.code === 'agent_output_invalid' && e.message.includes('not a verdict'));
  assert.throws(() => createAgent({ id: 'd', parseOutput: 'json' }),
    (e) => e instanceof AgentDefinitionError && e.message === 'Invalid agent definition: parseOutput must be a function (text) => output');
});

test('result.messages is run.messages, outside the canonical state', async () => {
  const agent = createAgent({ id: 'a' });
  const result = await agent.run({ input: 'hi', client: createScriptedClient([{ text: 'hello' }]) });
  assert.deepEqual(result.messages.map((m) => [m.role, m.content]), [['user', 'hi'], ['assistant', 'hello']]);
  assert.equal(result.messages, result.run.messages);
  assert.equal('messages' in JSON.parse(JSON.stringify(result)), false);
  assert.equal(Object.keys(result).includes('messages'), false);
  assert.equal(structuredClone(result).messages, undefined);
  const streamed = await agent.stream({ input: 'hi', client: createScriptedClient([{ text: 'hello' }]) }).getResult();
  assert.deepEqual(streamed.messages.map((m) => m.role), ['user', 'assistant']);
  const parsed = parseState(JSON.stringify(result));
  assert.deepEqual(parsed.messages, result.run.messages);
  // A continued run from a state that carries the accessor still reads back the same.
  const failed = await createAgent({ id: 'a', outputSchema: () => { throw new Error('no'); } })
    .run({ input: 'hi', client: createScriptedClient([{ text: 'bad' }]) }).catch((e) => e);
  assert.deepEqual(failed.result.messages.map((m) => m.role), ['user', 'assistant']);
});

test('approveToolCalls / rejectToolCalls are approvals / rejections', async () => {
  const risky = defineTool({ id: 'risky', requireApproval: true, execute: () => 'done' });
  const agent = createAgent({ id: 'a', tools: [risky] });
  const client = new RecordingClient([calls(call('c1', 'risky'), call('c2', 'risky')), { text: 'ok' }]);
  const paused = await agent.run({ input: 'x', client });
  const done = await agent.continueRun({ run: paused, client, approveToolCalls: ['c1'], rejectToolCalls: [{ toolCallId: 'c2', reason: 'no' }] });
  assert.equal(done.run.status, 'completed');
  const results = done.stepResults[0].toolResults;
  assert.deepEqual(results.map((r) => [r.toolCallId, r.result ?? r.error]), [['c1', 'done'], ['c2', 'no']]);
});

test('nextTurnParams with a function value is refused by name (the function form takes the whole object)', () => {
  assert.throws(() => defineTool({ id: 'plan', execute: () => 1, nextTurnParams: { model: () => 'm' } }),
    (e) => e instanceof AgentDefinitionError && e.message
      === "Invalid definition of tool 'plan': nextTurnParams.model is a function; give nextTurnParams itself as a function (input, context) => ({model: ...})");
});
