// Tool input as the model writes it (docs/behaviour.md §16) through the Node API: both HTTP
// clients streaming a tool call in pieces from a local server, a host streaming client, and the
// scripted client.
import assert from 'node:assert/strict';
import http from 'node:http';
import { test } from 'node:test';
import { AgentModelError, createAgent, createGatewayAgentClient, createOpenAICompatibleClient, createScriptedClient, defineTool } from '../index.mjs';

const PIECES = ['{"a":', '2,"b"', ':3}'];
const ARGUMENTS = PIECES.join('');

/** A local server answering each POST with the next list of SSE events; in the first reply,
 * everything after the first two events waits for `gate.open()` (at most 60 s). */
async function serve(replies, body) {
  let open;
  const opened = new Promise((resolve) => { open = resolve; });
  const gate = { opened: false, open: () => { gate.opened = true; open(); } };
  const bodies = [];
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (c) => { text += c; });
    req.on('end', async () => {
      bodies.push(JSON.parse(text));
      const first = bodies.length === 1;
      const chunks = replies.shift();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const [i, chunk] of chunks.entries()) {
        if (first && i === 2) await Promise.race([opened, new Promise((r) => setTimeout(r, 60000).unref())]);
        res.write(`data: ${JSON.stringify(chunk)}\n\n`);
      }
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await body(`http://127.0.0.1:${server.address().port}/v1`, gate, bodies);
  } finally {
    gate.open();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

function gatewayTurns() {
  const call = [{ type: 'response.output_item.added', output_index: 0, item: { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'add', arguments: '' } },
    ...PIECES.map((delta) => ({ type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 0, delta })),
    { type: 'response.completed', response: { status: 'completed', output: [{ type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'add', arguments: ARGUMENTS }] } }];
  const text = [{ type: 'response.completed', response: { status: 'completed', output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: '5' }] }] } }];
  return [call, text];
}

function openaiTurns() {
  const delta = (d, finish = null) => ({ id: 'x', choices: [{ index: 0, delta: d, finish_reason: finish }] });
  // The id and name come only in the call's first chunk.
  const call = [delta({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'add', arguments: '' } }] }),
    ...PIECES.map((p) => delta({ tool_calls: [{ index: 0, function: { arguments: p } }] })), delta({}, 'tool_calls')];
  return [call, [delta({ role: 'assistant', content: '5' }), delta({}, 'stop')]];
}

const calculator = (definition = {}) => createAgent({
  id: 'calc', tools: [defineTool({ id: 'add', parameters: { type: 'object' }, execute: (i) => i.a + i.b })], ...definition,
});

const inputDeltas = (events, id) => events.filter((e) => e.type === 'tool.input_delta' && e.toolCallId === id).map((e) => e.delta);

for (const wire of ['gateway', 'openai']) {
  test(`${wire}: tool input arrives live, in order, before model.completed`, async () => {
    await serve(wire === 'gateway' ? gatewayTurns() : openaiTurns(), async (url, gate, bodies) => {
      const client = wire === 'gateway' ? createGatewayAgentClient({ apiKey: 'k', baseUrl: url }) : createOpenAICompatibleClient({ baseUrl: url });
      const stream = calculator().stream({ input: '2+3?', client });
      const events = [];
      for await (const part of stream.getFullStream()) {
        if (part.type === 'result') continue;
        if (part.type === 'tool.input_delta' && !gate.opened) {
          // The server still holds the rest of the call: input is reported as it arrives.
          assert.ok(!events.some((e) => e.type === 'model.completed'));
          gate.open();
        }
        events.push(part);
      }
      assert.ok(gate.opened, 'no tool.input_delta reached the consumer while the call streamed');
      assert.equal((await stream).output, '5');
      const types = events.map((e) => e.type);
      const started = events.find((e) => e.type === 'tool.input_started');
      assert.deepEqual([started.toolCallId, started.toolName, started.stepIndex], ['call_1', 'add', 0]);
      assert.deepEqual(inputDeltas(events, 'call_1'), PIECES);
      assert.ok(types.indexOf('tool.input_started') < types.indexOf('tool.input_delta'));
      assert.ok(types.lastIndexOf('tool.input_delta') < types.indexOf('model.completed'));
      assert.ok(types.indexOf('model.completed') < types.indexOf('tool.started'));
      assert.ok(JSON.stringify(bodies[1]).includes('call_1'));
    });
  });
}

test('a run that is not streamed reports no tool input; the scripted client streams it in pieces', async () => {
  const script = () => createScriptedClient([{ toolCalls: [{ id: 'c1', name: 'add', arguments: ARGUMENTS }] }, { text: '5' }]);
  const seen = [];
  const result = await calculator().run({ input: '2+3?', client: script(), onEvent: (e) => { seen.push(e.type); } });
  assert.equal(result.output, '5');
  assert.ok(seen.includes('tool.completed'));
  assert.ok(!seen.includes('tool.input_started') && !seen.includes('tool.input_delta'));

  const stream = calculator().stream({ input: '2+3?', client: script() });
  const tools = [];
  for await (const e of stream.getToolStream()) tools.push(e);
  assert.deepEqual(tools.slice(0, 2).map((e) => e.type), ['tool.input_started', 'tool.input_delta']);
  assert.ok(inputDeltas(tools, 'c1').length > 1);
  assert.equal(inputDeltas(tools, 'c1').join(''), ARGUMENTS);
});

test('a host streaming client reports tool input; a failed attempt\'s input stays, only the retried call runs', async () => {
  let attempts = 0;
  const client = {
    async *stream() {
      attempts += 1;
      if (attempts === 1) {
        yield { type: 'tool-input-start', toolCallId: 'lost', toolName: 'add' };
        yield { type: 'tool-input-delta', toolCallId: 'lost', delta: '{"a":' };
        throw new Error('connection reset');
      }
      if (attempts === 2) {
        yield { type: 'tool-input-start', toolCallId: 'c2', toolName: 'add' };
        for (const delta of PIECES) yield { type: 'tool-input-delta', toolCallId: 'c2', delta };
        yield { type: 'response', response: { toolCalls: [{ id: 'c2', name: 'add', arguments: ARGUMENTS }] } };
        return;
      }
      yield { type: 'response', response: { text: '5' } };
    },
  };
  const stream = calculator({ modelRetry: { maxRetries: 1, backoffMs: 1 } }).stream({ input: '2+3?', client });
  const events = [];
  for await (const e of stream.getEventStream()) events.push(e);
  assert.equal((await stream).output, '5');
  assert.deepEqual(inputDeltas(events, 'lost'), ['{"a":']);
  assert.deepEqual(inputDeltas(events, 'c2'), PIECES);
  assert.deepEqual(events.filter((e) => e.type === 'tool.started').map((e) => e.toolCallId), ['c2']);
});

test('a malformed tool input event fails the attempt with a clear error', async () => {
  const client = { async *stream() { yield { type: 'tool-input-start', toolCallId: 'c1' }; } };
  await assert.rejects(calculator().stream({ input: 'x', client }),
    (e) => e instanceof AgentModelError && /model stream event "tool-input-start" has no "toolName"/.test(e.message));
});
