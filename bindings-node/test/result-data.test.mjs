// The result of a run is plain JSON data whose growing parts (run.messages, steps,
// stepResults, items) are parsed on first read: every way of reading it must see exactly
// the canonical state.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { inspect } from 'node:util';
import { createAgent, createScriptedClient, defineTool, parseState } from '../index.mjs';
import { call, calls } from './helpers.mjs';

const add = defineTool({
  id: 'add',
  parameters: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'number' } }, required: ['a', 'b'] },
  execute: ({ a, b }) => a + b,
});
const agent = createAgent({ id: 'calc', instructions: 'add', tools: [add], toolExecution: { toolConcurrency: 8 } });
const script = () => createScriptedClient([
  calls(call('c1', 'add', { a: 1, b: 2 }), call('c2', 'add', { a: 3, b: 4.5 })),
  calls(call('c3', 'add', { a: 5, b: 6 })),
  { text: 'done' },
]);
const run = () => agent.run({ input: 'go', context: { user: 'u1' }, client: script() });
const KEYS = ['version', 'run', 'steps', 'stepResults', 'usage', 'output', 'items'];

test('JSON.stringify of a result is the canonical state', async () => {
  const result = await run();
  const text = JSON.stringify(result);
  assert.equal(parseState(text) && JSON.stringify(parseState(text)), text);
  assert.deepEqual(Object.keys(result), KEYS);
  assert.equal(Object.keys(result.run).indexOf('messages'), 5);
  assert.equal(result.run.messages.length, 7);
  assert.equal(result.stepResults[1].toolResults[0].result, 11);
  assert.equal(result.items.at(-1).type, 'output');
  assert.equal(result.steps.length, 3);
  // Reading the parts first gives the same text, and the parts are stable objects.
  const again = await run();
  void again.items; void again.run.messages;
  assert.equal(JSON.stringify(again).replace(/"(id|createdAt|updatedAt)":"[^"]*"/g, ''), text.replace(/"(id|createdAt|updatedAt)":"[^"]*"/g, ''));
  assert.equal(again.run.messages, again.run.messages);
});

test('a result compares, clones, spreads and prints as plain data', async () => {
  const result = await run();
  const plain = JSON.parse(JSON.stringify(await run()));
  const fresh = await run();
  const copy = structuredClone(fresh);
  assert.deepEqual(Object.keys(copy), KEYS);
  assert.equal(copy.run.messages.length, 7);
  assert.deepEqual({ ...(await run()) }.items.length, plain.items.length);
  const same = (x) => JSON.parse(JSON.stringify(x).replace(/"(id|createdAt|updatedAt)":"[^"]*"/g, '"x":0'));
  assert.deepEqual(same(result), same(plain));
  assert.deepStrictEqual(JSON.parse(JSON.stringify(result)), result);
  assert.deepStrictEqual(result, JSON.parse(JSON.stringify(result)));
  const printed = inspect(await run(), { depth: 5 });
  assert.ok(!printed.includes('Getter'), printed);
  assert.ok(printed.includes("role: 'tool'"), printed);
  for (const key in result) assert.ok(KEYS.includes(key));
});

test('the parts of a result can be replaced, deleted and mutated', async () => {
  const result = await run();
  result.items = [];
  assert.deepEqual(result.items, []);
  result.run.messages.push({ role: 'user', content: 'more' });
  assert.equal(result.run.messages.at(-1).content, 'more');
  delete result.steps;
  assert.ok(!('steps' in result));
  const data = JSON.parse(JSON.stringify(result));
  assert.deepEqual(data.items, []);
  assert.equal(data.run.messages.at(-1).content, 'more');
  assert.equal(data.steps, undefined);
  const frozen = Object.freeze(await run());
  assert.equal(frozen.stepResults.length, 3);
  assert.equal(frozen.stepResults, frozen.stepResults);
});

test('a result continues a run (the state crosses as its JSON)', async () => {
  const approving = createAgent({ id: 'desk', tools: [defineTool({ id: 'pay', execute: (i) => i.n, requireApproval: true })] });
  const client = createScriptedClient([calls(call('p1', 'pay', { n: 7 })), { text: 'paid' }]);
  const paused = await approving.run({ input: 'go', client });
  assert.equal(paused.run.status, 'waiting_for_human');
  const done = await approving.continueRun({ run: paused, client, approvals: ['p1'] });
  assert.equal(done.output, 'paid');
  assert.equal(done.run.messages.find((m) => m.role === 'tool').content, '7');
});
