// Tools from a Standard Schema (docs/behaviour.md §20): zod 4's JSON Schema sent as
// `parameters`, arguments validated and handed to `execute` as the schema's output, wrong
// types returned to the model, the strict form, a recursive schema, and a call paused by
// the Python twin of the tool and continued here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { z } from 'zod';
import { createAgent, defineTool, tool } from '../index.mjs';
import { RecordingClient, call, calls } from './helpers.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

/** `schema` equals the checked-in fixture (`PHASEO_UPDATE_FIXTURES=1` rewrites it). */
function assertSchema(schema, name) {
  const file = path.join(here, 'fixtures', name);
  if (process.env.PHASEO_UPDATE_FIXTURES) writeFileSync(file, `${JSON.stringify(schema, null, 2)}\n`);
  assert.deepEqual(schema, JSON.parse(readFileSync(file, 'utf8')));
}

const Customer = z.object({
  id: z.string().describe('The customer\'s id in the shop, e.g. "C-1042".'),
  name: z.string().describe('Shown on the packing slip.'),
}).describe('Who the order is for.');

const LineItem = z.object({
  sku: z.string().describe('Stock keeping unit.'),
  quantity: z.number().int().min(1).describe('How many, at least 1.'),
}).describe('One product line.');

/** The arguments of `place_order`, as the Python twin (tests of the Python binding) has them. */
const PlaceOrder = z.object({
  customer: Customer,
  items: z.array(LineItem).describe('The products, in the order the customer added them.'),
  shipping: z.enum(['standard', 'express']).describe('How the parcel travels.'),
  note: z.string().optional().describe('A note for the courier.'),
  gift_wrap: z.boolean().default(false).describe('Wrap as a gift.'),
});

const toolContents = (request) => request.messages.filter((m) => m.role === 'tool').map((m) => JSON.parse(m.content));

function placeOrder(ran, extra = {}) {
  return defineTool({
    id: 'place_order',
    description: 'Places an order.',
    inputSchema: PlaceOrder,
    execute: (order, context) => {
      const units = order.items.reduce((n, item) => n + item.quantity, 0);
      ran.push(`${order.customer.name} ${order.shipping} ${order.items.map((i) => i.sku).join(',')} ${units} ${order.note ?? null} ${order.gift_wrap} ${context.toolCall.id}`);
      return { order_id: `O-${order.customer.id}`, units };
    },
    ...extra,
  });
}

const ORDER = { customer: { id: 'C-7', name: 'Ana' }, items: [{ sku: 'A', quantity: 2 }, { sku: 'B', quantity: 3 }], shipping: 'express' };

test('the schema comes from the zod schema with its descriptions', () => {
  assertSchema(placeOrder([]).parameters, 'typed_place_order.json');
});

test('a call runs with the validated output, defaults applied', async () => {
  const ran = [];
  const agent = createAgent({ id: 'shop', tools: [placeOrder(ran)] });
  const client = new RecordingClient([calls(call('c1', 'place_order', ORDER)), { text: 'placed' }]);
  assert.equal((await agent.run({ input: 'order', client })).run.status, 'completed');
  assert.deepEqual(ran, ['Ana express A,B 5 null false c1']);
  assert.deepEqual(toolContents(client.requests[1]), [{ order_id: 'O-C-7', units: 5 }]);
});

test('wrong types go back to the model with their place, and it retries', async () => {
  const ran = [];
  const agent = createAgent({ id: 'shop', tools: [placeOrder(ran, { onError: 'return-to-model' })] });
  const wrong = { ...ORDER, items: [{ sku: 'A', quantity: 'two' }] };
  const client = new RecordingClient([calls(call('c1', 'place_order', wrong)), calls(call('c2', 'place_order', ORDER)), { text: 'placed' }]);
  assert.equal((await agent.run({ input: 'order', client })).run.status, 'completed');
  assert.deepEqual(ran, ['Ana express A,B 5 null false c2']);
  const { error } = toolContents(client.requests[1])[0];
  assert.ok(error.startsWith('Invalid tool input: /items/0/quantity: '), error);
});

test('a rule the JSON Schema cannot carry is checked by the validator and named by its path', async () => {
  const Stay = z.object({ guest: z.string(), nights: z.number().int() })
    .refine((stay) => stay.nights <= 14, { message: 'at most 14 nights', path: ['nights'] });
  const book = defineTool({ id: 'book', inputSchema: z.object({ stays: z.array(Stay) }), onError: 'return-to-model', execute: (input) => input.stays.length });
  const agent = createAgent({ id: 'desk', tools: [book] });
  const stays = [{ guest: 'Ana', nights: 2 }, { guest: 'Bo', nights: 30 }];
  const client = new RecordingClient([calls(call('c1', 'book', { stays })), { text: 'too long' }]);
  assert.equal((await agent.run({ input: 'book', client })).run.status, 'completed');
  assert.equal(toolContents(client.requests[1])[0].error, 'Invalid tool input: /stays/1/nights: at most 14 nights');
});

test('the strict form lists every field and a null is the default', async () => {
  const ran = [];
  const strict = placeOrder(ran, { strict: true });
  assert.deepEqual(strict.parameters.required, ['customer', 'items', 'shipping', 'note', 'gift_wrap']);
  assert.equal(strict.parameters.additionalProperties, false);
  const agent = createAgent({ id: 'shop', tools: [strict] });
  const client = new RecordingClient([calls(call('c1', 'place_order', { ...ORDER, note: null, gift_wrap: null })), { text: 'ok' }]);
  assert.equal((await agent.run({ input: 'order', client })).run.status, 'completed');
  assert.deepEqual(ran, ['Ana express A,B 5 null false c1']);
});

test('a recursive schema refers to its own definition', async () => {
  const Category = z.object({
    name: z.string().describe("The category's label."),
    get children() { return z.array(Category).default([]).describe('Sub-categories.'); },
  }).describe('A node of the catalogue tree: it holds its own kind.');
  const size = (c) => 1 + c.children.reduce((n, child) => n + size(child), 0);
  const seen = [];
  const file = tool({ id: 'file_categories', inputSchema: Category, execute: (root) => { seen.push(size(root)); return root.name; } });
  assertSchema(file.parameters, 'typed_category.json');
  const agent = createAgent({ id: 'catalogue', tools: [file] });
  const tree = { name: 'root', children: [{ name: 'a', children: [{ name: 'a1' }] }, { name: 'b' }] };
  const client = new RecordingClient([calls(call('c1', 'file_categories', tree)), { text: 'filed' }]);
  assert.equal((await agent.run({ input: 'file', client })).run.status, 'completed');
  assert.deepEqual(seen, [4]);
});

test('typed tools mix with plain ones', async () => {
  const add = defineTool({ id: 'add', parameters: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } } }, execute: (i) => i.a + i.b });
  const agent = createAgent({ id: 'mixed', tools: [add, placeOrder([])] });
  const client = new RecordingClient([calls(call('c1', 'add', { a: 2, b: 3 }), call('c2', 'place_order', ORDER)), { text: 'ok' }]);
  assert.equal((await agent.run({ input: 'go', client })).run.status, 'completed');
  assert.deepEqual(toolContents(client.requests[1]), [5, { order_id: 'O-C-7', units: 5 }]);
});

test('a call paused by the Python twin continues here with an edited input', async () => {
  // The Python binding's typed `place_order` (a typed function) pauses for approval and
  // prints the state; its zod twin here runs the approved call.
  const python = process.env.PHASEO_PYTHON || path.join(here, '..', '..', '.venvs', 'py', 'bin', 'python');
  const script = path.join(here, '..', '..', 'bindings-python', 'tests', 'typed_order.py');
  const paused = spawnSync(python, [script, 'order from Python'], { encoding: 'utf8', timeout: 120000 });
  assert.equal(paused.status, 0, `the Python side failed: ${paused.error ?? ''}${paused.stderr}`);
  const state = paused.stdout.trim();
  assert.equal(JSON.parse(state).run.status, 'waiting_for_human');
  const ran = [];
  const agent = createAgent({ id: 'shop', tools: [placeOrder(ran, { requireApproval: true })] });
  const client = new RecordingClient([{ text: 'placed' }]);
  const done = await agent.continueRun({
    state, client, approvals: [{ toolCallId: 'c1', editedInput: { customer: { id: 'C-7', name: 'Ana' }, items: [{ sku: 'A', quantity: 9 }], shipping: 'standard', note: 'leave at the door' } }],
  });
  assert.equal(done.run.status, 'completed');
  assert.deepEqual(ran, ['Ana standard A 9 leave at the door false c1']);
  assert.deepEqual(toolContents(client.requests[0]).at(-1), { order_id: 'O-C-7', units: 9 });
});
