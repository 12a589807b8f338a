// Deferred tools and the built-in `tool_search` (docs/behaviour.md §17) through the public
// API: a tool's `deferLoading: true` (an MCP server's `deferLoading` is in mcp.test.mjs).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AgentDefinitionError, createAgent, defineTool } from '../index.mjs';
import { call, calls, RecordingClient } from './helpers.mjs';

const offered = (request) => request.tools.map((t) => t.id);
/** The request's tool message answering `callId`, its content parsed. */
const toolMessage = (request, callId) => JSON.parse(request.messages.find((m) => m.role === 'tool' && m.toolCallId === callId).content);

/** An always-loaded tool, one needing approval, and two deferred tools. */
function weatherTools(ran) {
  return [
    defineTool({ id: 'clock', description: 'The time', execute: () => 'noon' }),
    defineTool({ id: 'gate', description: 'Opens the gate', requireApproval: true, execute: () => { ran.push('gate'); return 'opened'; } }),
    defineTool({
      id: 'get_weather',
      description: 'Current weather of a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } } },
      deferLoading: true,
      execute: async (input) => { ran.push(`get_weather:${input.city}`); return 'sunny'; },
    }),
    defineTool({ id: 'stock_price', description: 'Price of a share', deferLoading: true, execute: () => 42 }),
  ];
}

test('a deferred tool is offered only after tool_search finds it, then it runs', async () => {
  const ran = [];
  const agent = createAgent({ id: 'assistant', tools: weatherTools(ran) });
  const client = new RecordingClient([
    calls(call('c1', 'tool_search', { query: 'weather in a city' })),
    calls(call('c2', 'get_weather', { city: 'Oslo' })),
    { text: 'Sunny in Oslo.' },
  ]);

  const done = await agent.run({ input: 'weather?', client });

  assert.equal(done.run.status, 'completed');
  assert.equal(done.output, 'Sunny in Oslo.');
  assert.deepEqual(ran, ['get_weather:Oslo']);
  // tool_search follows the always-loaded tools; a loaded tool joins at the end.
  assert.deepEqual(offered(client.requests[0]), ['clock', 'gate', 'tool_search']);
  assert.deepEqual(offered(client.requests[1]), ['clock', 'gate', 'tool_search', 'get_weather']);
  assert.deepEqual(toolMessage(client.requests[1], 'c1'),
    { tools: [{ id: 'get_weather', description: 'Current weather of a city' }] });
  assert.deepEqual(offered(client.requests[2]), ['clock', 'gate', 'tool_search', 'get_weather']);
  assert.deepEqual(JSON.parse(JSON.stringify(done)).run.loadedTools, ['get_weather']);
});

test('loaded tools are in the state JSON and a continue keeps offering them', async () => {
  const ran = [];
  const agent = createAgent({ id: 'assistant', tools: weatherTools(ran) });
  const client = new RecordingClient([
    calls(call('c1', 'tool_search', { query: 'share price' }), call('c2', 'gate')),
    calls(call('c3', 'stock_price')),
    { text: '42.' },
  ]);

  const paused = await agent.run({ input: 'price?', client });
  assert.equal(paused.run.status, 'waiting_for_human');
  const saved = JSON.stringify(paused);
  assert.deepEqual(JSON.parse(saved).run.loadedTools, ['stock_price']);

  // A fresh agent (as in another process) continues from the saved JSON.
  const resumed = createAgent({ id: 'assistant', tools: weatherTools(ran) });
  const done = await resumed.continueRun({ state: saved, client, approvals: ['c2'] });

  assert.equal(done.run.status, 'completed');
  assert.equal(done.output, '42.');
  assert.deepEqual(ran, ['gate']);
  assert.deepEqual(offered(client.requests[1]), ['clock', 'gate', 'tool_search', 'stock_price']);
  assert.equal(toolMessage(client.requests[2], 'c3'), 42);
});

test('an agent with deferred tools cannot define its own tool_search', () => {
  const mine = defineTool({ id: 'tool_search', execute: () => 1 });
  const later = defineTool({ id: 'later', deferLoading: true, execute: () => 2 });
  assert.throws(() => createAgent({ id: 'assistant', tools: [mine, later] }),
    (e) => e instanceof AgentDefinitionError && e.code === 'definition_invalid' && e.message.includes("'tool_search'"));
});

test('deferLoading must be a boolean', () => {
  assert.throws(() => defineTool({ id: 't', deferLoading: 'yes', execute: () => 1 }),
    (e) => e instanceof AgentDefinitionError && e.message === "Invalid definition of tool 't': deferLoading must be a boolean, got string");
});
