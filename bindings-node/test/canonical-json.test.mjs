import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAgent, createScriptedClient, defineTool } from '../index.mjs';
import { call, calls, RecordingClient } from './helpers.mjs';

// The same texts as bindings-python/tests/test_canonical_json.py: every language writes them.
const ANSWER = '{"small":1e-6,"big":1E21,"whole":2.0,"name":"Zoë","tiny":1.5e-7}';
const CANONICAL = '{"small":0.000001,"big":1e+21,"whole":2,"name":"Zoë","tiny":1.5e-7}';

test('getText() of a structured output and the state use the canonical number text', async () => {
  const agent = createAgent({ id: 'a', outputSchema: { type: 'object' } });
  const stream = agent.stream({ input: 'go', client: createScriptedClient([{ text: ANSWER }]) });
  assert.equal(await stream.getText(), CANONICAL);
  const result = await stream.getResult();
  assert.deepEqual(result.output, { small: 1e-6, big: 1e21, whole: 2, name: 'Zoë', tiny: 1.5e-7 });
  assert.ok(JSON.stringify(result).includes(`"result":${CANONICAL}`));
});

test('tool messages written by the core use JavaScript number text', async () => {
  const measure = defineTool({
    id: 'measure',
    execute: (input, context) => {
      context.setContext({ limit: 1e21 });
      return { small: 1e-6, big: 1e21, neg: -1e-6, third: 0.1 + 0.2 };
    },
  });
  const client = new RecordingClient([calls(call('c1', 'measure')), { text: 'ok' }]);
  const result = await createAgent({ id: 'a', tools: [measure] }).run({ input: 'go', client });
  const toolMessage = client.requests[1].messages.find((m) => m.role === 'tool');
  assert.equal(toolMessage.content, '{"small":0.000001,"big":1e+21,"neg":-0.000001,"third":0.30000000000000004}');
  assert.equal(toolMessage.content, JSON.stringify({ small: 1e-6, big: 1e21, neg: -1e-6, third: 0.1 + 0.2 }));
  assert.ok(JSON.stringify(result).includes('"context":{"limit":1e+21}'));
});
