import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import {
  AgentSchemaValidationError, createAgent, createScriptedClient, createTestClient, defineTool, jsonSchemaValidator, maxCost, stepCountIs,
} from '../index.mjs';
import { call, calls, sleep } from './helpers.mjs';

test('stream: replay to every consumer, text deltas, tool events, items, awaitable', async () => {
  const agent = createAgent({ id: 'a', tools: [defineTool({ id: 't', execute: () => 1 })] });
  const stream = agent.stream({ input: 'go', client: createScriptedClient([calls(call('c1', 't')), { text: 'hello brave world' }]) });
  const [text, types, tools] = await Promise.all([
    (async () => { let s = ''; for await (const d of stream.getTextStream()) s += d; return s; })(),
    (async () => { const t = []; for await (const e of stream.getEventStream()) t.push(e.type); return t; })(),
    (async () => { const t = []; for await (const e of stream.getToolStream()) t.push(e.type); return t; })(),
  ]);
  assert.equal(text, 'hello brave world');
  assert.equal(types[0], 'run.started');
  assert.equal(types.at(-1), 'run.completed');
  // The call's input as the model wrote it (docs/behaviour.md §16), then its run.
  assert.deepEqual(tools, ['tool.input_started', 'tool.input_delta', 'tool.started', 'tool.completed']);
  const result = await stream;
  assert.equal(result.output, 'hello brave world');
  assert.equal(await stream.getText(), 'hello brave world');
  const items = [];
  for await (const item of stream.getItemsStream()) items.push(item.type);
  assert.ok(items.includes('tool_call'));
  assert.equal(items.at(-1), 'output');
  const full = [];
  for await (const e of stream) full.push(e);
  assert.equal(full.at(-1).type, 'result');
  assert.deepEqual(full.at(-1).result, result);
});

test('stream cancel resolves with a cancelled result; a signal cancels a run', async () => {
  const agent = createAgent({ id: 'a', tools: [defineTool({ id: 't', execute: (i, ctx) => new Promise((resolve) => { const timer = setTimeout(resolve, 5000); ctx.signal.addEventListener('abort', () => { clearTimeout(timer); resolve(0); }); }) })] });
  const stream = agent.stream({ input: 'go', client: createScriptedClient([calls(call('c1', 't'))]) });
  await sleep(30);
  const cancelled = await stream.cancel('user left');
  assert.equal(cancelled.run.status, 'cancelled');
  assert.deepEqual(cancelled.run.error, { code: 'cancelled', message: 'user left' });
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 30);
  const result = await agent.run({ input: 'go', client: createScriptedClient([calls(call('c1', 't'))]), signal: controller.signal });
  assert.equal(result.run.status, 'cancelled');
});

test('zod schema as inputSchema supplies parameters and validates', async () => {
  const tool = defineTool({ id: 'place', inputSchema: z.object({ item: z.string(), quantity: z.number().int() }), execute: (order) => ({ ok: order.quantity }) });
  assert.equal(tool.parameters.properties.quantity.type, 'integer');
  const agent = createAgent({ id: 'a', tools: [tool] });
  const ok = await agent.run({ input: 'go', client: createScriptedClient([calls(call('c1', 'place', { item: 'pen', quantity: 2 })), { text: 'ok' }]) });
  assert.equal(ok.run.status, 'completed');
  await assert.rejects(agent.run({ input: 'go', client: createScriptedClient([calls(call('c1', 'place', { item: 'pen', quantity: 1.5 }))]) }),
    (e) => e instanceof AgentSchemaValidationError && e.message.startsWith('Invalid tool input: '));
});

for (const [name, validator] of [
  ['function', (v) => { if (!v.ok) throw new Error('not ok'); return v; }],
  ['zod', z.object({ ok: z.literal(true) })],
  ['JSON Schema object', { type: 'object', required: ['ok'], properties: { ok: { const: true } } }],
  ['jsonSchemaValidator', jsonSchemaValidator({ type: 'object', required: ['ok'] })],
  ['parse object', { parse(v) { if (!v.ok) throw new Error('not ok'); return v; } }],
]) {
  test(`outputSchema as ${name}`, async () => {
    const good = createAgent({ id: 'a', tools: [defineTool({ id: 't', execute: () => ({ ok: true }), outputSchema: validator })] });
    assert.equal((await good.run({ input: 'go', client: createScriptedClient([calls(call('c1', 't')), { text: 'fine' }]) })).run.status, 'completed');
    const bad = createAgent({ id: 'a', tools: [defineTool({ id: 't', execute: () => ({ nope: 1 }), outputSchema: validator })] });
    await assert.rejects(bad.run({ input: 'go', client: createScriptedClient([calls(call('c1', 't'))]) }),
      (e) => e instanceof AgentSchemaValidationError && e.target === 'tool_output' && e.message.startsWith('Invalid tool output: '));
  });
}

test('stop conditions and a function predicate', async () => {
  const agent = createAgent({ id: 'a', tools: [defineTool({ id: 't', execute: () => 1 })] });
  const script = () => createScriptedClient([{ ...calls(call('c1', 't')), cost: 0.5 }, { ...calls(call('c2', 't')), cost: 0.5 }, { text: 'never' }]);
  assert.equal((await agent.run({ input: 'go', client: script(), stopWhen: maxCost(1) })).run.stopReason, 'max_cost:1');
  assert.equal((await agent.run({ input: 'go', client: script(), stopWhen: [stepCountIs(1)] })).run.stopReason, 'step_count:1');
  const custom = await agent.run({ input: 'go', client: script(), stopWhen: (s) => (s.stepCount >= 2 ? 'enough' : false) });
  assert.equal(custom.run.stopReason, 'enough');
});

test('test client calls every tool once, then summarizes', async () => {
  const tool = defineTool({ id: 'echo', parameters: { type: 'object', properties: { word: { type: 'string', examples: ['hi'] } } }, execute: (i) => i.word });
  const result = await createAgent({ id: 'a', tools: [tool] }).run({ input: 'try', client: createTestClient() });
  assert.equal(result.run.status, 'completed');
  assert.match(result.output, /echo: hi/);
});
