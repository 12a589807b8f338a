// Request controls (docs/behaviour.md §12) from Node: toolChoice, parallelToolCalls, activeTools, tool
// strict and inputExamples as host clients receive them; and hook signals that abort.
import test from 'node:test';
import assert from 'node:assert/strict';

import { AgentDefinitionError, AgentError, createAgent, defineTool } from '../index.mjs';
import { RecordingClient, call, calls, sleep } from './helpers.mjs';

const STRICT = {
  type: 'object',
  additionalProperties: false,
  properties: { city: { type: 'string' } },
  required: ['city'],
};

const echo = (id, extra = {}) => defineTool({ id, execute: (input) => input, ...extra });

test('the controls reach host clients in the request', async () => {
  const agent = createAgent({
    id: 'a',
    tools: [echo('weather', { parameters: STRICT, strict: true, inputExamples: [{ city: 'Paris' }] }), echo('plain')],
    toolChoice: { toolId: 'weather' },
    parallelToolCalls: false,
  });
  const client = new RecordingClient([{ text: 'ok' }]);
  await agent.run({ input: 'go', client });
  const [request] = client.requests;
  assert.deepEqual(request.toolChoice, { toolId: 'weather' });
  assert.equal(request.parallelToolCalls, false);
  assert.equal(request.tools[0].strict, true);
  assert.deepEqual(request.tools[0].inputExamples, [{ city: 'Paris' }]);
  assert.equal('strict' in request.tools[1], false);
});

test('per turn, per run and unset values', async () => {
  const agent = createAgent({
    id: 'a',
    tools: [echo('a1'), echo('a2')],
    toolChoice: (turn) => (turn.stepIndex === 0 ? 'required' : null),
  });
  let client = new RecordingClient([calls(call('c1', 'a1')), { text: 'ok' }]);
  await agent.run({ input: 'go', client });
  assert.deepEqual(client.requests.map((r) => r.toolChoice), ['required', null]);
  assert.equal(client.requests[0].parallelToolCalls, null);

  client = new RecordingClient([{ text: 'ok' }]);
  await agent.run({ input: 'go', client, toolChoice: 'none', parallelToolCalls: true, activeTools: ['a2'] });
  assert.equal(client.requests[0].toolChoice, 'none');
  assert.equal(client.requests[0].parallelToolCalls, true);
  assert.deepEqual(client.requests[0].tools.map((t) => t.id), ['a2']);
});

test('a call to a tool not offered is unknown_tool; bad controls are refused', async () => {
  const agent = createAgent({ id: 'a', tools: [echo('a1'), echo('a2')], activeTools: ['a1'] });
  await assert.rejects(agent.run({ input: 'go', client: new RecordingClient([calls(call('c1', 'a2'))]) }), (error) => {
    assert.ok(error instanceof AgentError);
    assert.equal(error.code, 'unknown_tool');
    assert.equal(error.message, "Unknown tool 'a2' (not offered in this turn)");
    return true;
  });
  assert.throws(
    () => echo('w', { parameters: { type: 'object', properties: { a: {} }, required: ['a'] }, strict: true }),
    (error) => error instanceof AgentDefinitionError && error.code === 'definition_invalid'
      && error.message.includes('strict: parameters are not strict-compatible: the object schema at / must set'),
  );
  assert.throws(() => createAgent({ id: 'a', tools: [echo('a1')], activeTools: ['nope'] }), /names no tool of the agent: 'nope'/);
  await assert.rejects(
    createAgent({ id: 'a', tools: [echo('a1')] }).run({ input: 'go', client: new RecordingClient([]), toolChoice: 'sometimes' }),
    (error) => error.code === 'definition_invalid' && /toolChoice must be/.test(error.message),
  );
});

test('a hook signal aborts when its call times out', async () => {
  let aborted = false;
  const ask = defineTool({
    id: 'ask',
    // 1 s away, so that the hook has begun (and listens for the abort) even on a loaded machine.
    timeoutMs: 1000,
    onToolCalled: (input, context) => new Promise((resolve) => {
      context.signal.addEventListener('abort', () => { aborted = true; resolve('stopped'); });
      setTimeout(() => resolve('late'), 5000).unref();
    }),
  });
  const agent = createAgent({ id: 'a', tools: [ask] });
  const started = Date.now();
  await assert.rejects(agent.run({ input: 'go', client: new RecordingClient([calls(call('c1', 'ask'))]) }), (error) => {
    assert.equal(error.code, 'tool_timeout');
    assert.equal(error.message, 'Tool ask timed out after 1000ms');
    return true;
  });
  assert.ok(Date.now() - started < 2500, `took ${Date.now() - started} ms`);
  for (const deadline = Date.now() + 10_000; !aborted && Date.now() < deadline;) await sleep(10);
  assert.equal(aborted, true);
});

test('a hook signal aborts when the run is cancelled', async () => {
  let aborted = false;
  const ask = defineTool({
    id: 'ask',
    onToolCalled: (input, context) => new Promise((resolve) => {
      context.signal.addEventListener('abort', () => { aborted = true; resolve(null); });
      setTimeout(() => resolve('late'), 5000).unref();
      // Cancel once the hook is running, however long a loaded machine takes to get here.
      setTimeout(() => controller.abort(), 0);
    }),
  });
  const agent = createAgent({ id: 'a', tools: [ask] });
  const controller = new AbortController();
  const result = await agent.run({ input: 'go', client: new RecordingClient([calls(call('c1', 'ask'))]), signal: controller.signal });
  assert.equal(result.run.status, 'cancelled');
  for (const deadline = Date.now() + 10_000; !aborted && Date.now() < deadline;) await sleep(10);
  assert.equal(aborted, true);
});

test('a slow eventSchema cannot hold the deadline; queued progress is dropped', async () => {
  const checked = [];
  const slow = defineTool({
    id: 'slow',
    timeoutMs: 300,
    onError: 'return-to-model',
    eventSchema: (value) => new Promise((resolve) => {
      checked.push(value);
      setTimeout(() => resolve(value), 2000).unref();
    }),
    execute: async (input, context) => {
      context.emitProgress('a');
      context.emitProgress('b');
      await new Promise((resolve) => { setTimeout(resolve, 5000).unref(); });
      return 'late';
    },
  });
  const agent = createAgent({ id: 'a', tools: [slow] });
  const started = Date.now();
  const result = await agent.run({ input: 'go', client: new RecordingClient([calls(call('c1', 'slow')), { text: 'ok' }]) });
  assert.ok(Date.now() - started < 1500, `took ${Date.now() - started} ms`);
  const toolResult = result.stepResults[0].toolResults[0];
  assert.equal(toolResult.error, 'Tool slow timed out after 300ms');
  assert.deepEqual(toolResult.preliminaryResults, []);
  // The second value was still queued at the deadline: never checked.
  assert.deepEqual(checked, ['a']);
});

test('control values that cannot be stored are refused like any other definition value', async () => {
  const cycle = { city: 'Paris' };
  cycle.self = cycle;
  let deep = { toolId: 'a1' };
  for (let i = 0; i < 100; i += 1) deep = { toolId: deep };
  assert.throws(() => echo('w', { inputExamples: [cycle] }), (error) => error instanceof TypeError
    && /inputExamples/.test(error.message) && /cycle/.test(error.message));
  assert.throws(() => createAgent({ id: 'a', tools: [echo('a1')], toolChoice: deep }), (error) => error instanceof RangeError
    && /toolChoice/.test(error.message) && /nested more than 64 levels deep/.test(error.message));
  const agent = createAgent({ id: 'a', tools: [echo('a1')] });
  await assert.rejects(agent.run({ input: 'go', client: new RecordingClient([]), toolChoice: cycle }),
    (error) => error instanceof TypeError && /toolChoice/.test(error.message));
  await assert.rejects(agent.run({ input: 'go', client: new RecordingClient([]), activeTools: [cycle] }),
    (error) => error instanceof TypeError && /activeTools/.test(error.message));
  // Per-turn answers cross as every callable's value does: a cycle is the run's error.
  const perTurn = createAgent({ id: 'a', tools: [echo('a1')], activeTools: () => [cycle] });
  await assert.rejects(perTurn.run({ input: 'go', client: new RecordingClient([{ text: 'x' }]) }),
    (error) => error instanceof AgentError && /cycle/.test(error.message));
});
