import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { test } from 'node:test';
import { AgentGatewayError, AgentModelError, createAgent, createGatewayAgentClient, createOpenAICompatibleClient, defineTool } from '../index.mjs';

const KEY = 'sk-test-secret-123';
const JSON_HEADERS = { 'content-type': 'application/json' };

/** A local server answering each POST with the next scripted reply `[status, headers, body]`
 * (`status` 0: never answer). */
async function serve(replies, body) {
  const requests = [];
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (c) => { text += c; });
    req.on('end', () => {
      requests.push({ path: req.url, headers: req.headers, body: JSON.parse(text) });
      const [status, headers, payload] = replies.shift();
      if (status === 0) return;
      res.writeHead(status, headers);
      res.end(payload);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/v1`;
  try {
    await body(url, requests);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

const responsesReply = (output) => [200, JSON_HEADERS, JSON.stringify({ id: 'resp_1', status: 'completed', output, usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5 } })];

test('gateway round trip: key only in the header, context never sent', async () => {
  await serve([
    responsesReply([{ type: 'function_call', call_id: 'c1', name: 'lookup', arguments: '{"id":7}' }]),
    responsesReply([{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Found 7.' }] }]),
  ], async (url, requests) => {
    const agent = createAgent({ id: 'desk', instructions: 'Be brief.', tools: [defineTool({ id: 'lookup', parameters: { type: 'object' }, execute: (i) => ({ found: i.id }) })] });
    const client = createGatewayAgentClient({ apiKey: KEY, baseUrl: url, model: 'phaseo/test' });
    const result = await agent.run({ input: 'find 7', client, context: { secret: 'do-not-send' } });
    assert.equal(result.output, 'Found 7.');
    assert.deepEqual(requests.map((r) => r.path), ['/v1/responses', '/v1/responses']);
    assert.equal(requests[0].headers.authorization, `Bearer ${KEY}`);
    assert.equal(requests[0].headers['x-phaseo-client'], 'phaseo-agent-node');
    assert.equal(requests[0].body.instructions, 'Be brief.');
    assert.ok(!JSON.stringify(requests[0].body).includes('do-not-send'));
    assert.ok(requests[1].body.input.some((i) => i.type === 'function_call_output' && i.call_id === 'c1' && i.output === '{"found":7}'));
    assert.ok(!JSON.stringify(result).includes(KEY));
  });
});

test('OpenAI-compatible streaming: deltas arrive in order', async () => {
  const chunks = ['Hel', 'lo ', 'there'];
  const sse = chunks.map((c) => `data: ${JSON.stringify({ id: 'x', choices: [{ index: 0, delta: { content: c } }] })}\n\n`).join('') +
    `data: ${JSON.stringify({ id: 'x', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`;
  await serve([[200, { 'content-type': 'text/event-stream' }, sse]], async (url, requests) => {
    const stream = createAgent({ id: 'a' }).stream({ input: 'hi', client: createOpenAICompatibleClient({ baseUrl: url, model: 'local' }) });
    const deltas = [];
    for await (const d of stream.getTextStream()) deltas.push(d);
    assert.deepEqual(deltas, chunks);
    assert.equal((await stream).output, 'Hello there');
    assert.equal(requests[0].path, '/v1/chat/completions');
    assert.equal(requests[0].body.stream, true);
  });
});

test('429 then success; 500 on every attempt is an AgentGatewayError; 400 is not retried', async () => {
  await serve([[429, { ...JSON_HEADERS, 'retry-after': '0' }, '{"error":{"message":"slow down"}}'],
    responsesReply([{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] }])], async (url, requests) => {
    const result = await createAgent({ id: 'a', modelRetry: { maxRetries: 1, backoffMs: 30000 } }).run({ input: 'x', client: createGatewayAgentClient({ apiKey: KEY, baseUrl: url }) });
    assert.equal(result.output, 'ok');
    assert.equal(requests.length, 2);
  });
  await serve(Array(3).fill([500, { ...JSON_HEADERS, 'x-request-id': 'req_9' }, '{"error":{"message":"boom"}}']), async (url, requests) => {
    await assert.rejects(createAgent({ id: 'a', modelRetry: { maxRetries: 2, backoffMs: 1 } }).run({ input: 'x', client: createGatewayAgentClient({ apiKey: KEY, baseUrl: url }) }),
      (e) => e instanceof AgentGatewayError && e.code === 'gateway' && e.status === 500 && e.requestId === 'req_9' &&
        e.message === 'Gateway request failed: 500 Internal Server Error - boom' && !e.message.includes(KEY) && e.result.run.status === 'failed');
    assert.equal(requests.length, 3);
  });
  await serve(Array(3).fill([400, JSON_HEADERS, '{"error":{"message":"bad"}}']), async (url, requests) => {
    await assert.rejects(createAgent({ id: 'a', modelRetry: { maxRetries: 2, backoffMs: 1 } }).run({ input: 'x', client: createOpenAICompatibleClient({ baseUrl: url, apiKey: KEY }) }),
      (e) => e instanceof AgentGatewayError && e.status === 400);
    assert.equal(requests.length, 1);
  });
});

test('connection refused, malformed body and a server that never answers', async () => {
  const port = await new Promise((resolve) => { const s = net.createServer(); s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); }); });
  await assert.rejects(createAgent({ id: 'a' }).run({ input: 'x', client: createOpenAICompatibleClient({ baseUrl: `http://127.0.0.1:${port}/v1` }) }),
    (e) => e instanceof AgentModelError && e.code === 'model_failed' && e.message.includes('connection failed'));
  await serve([[200, JSON_HEADERS, '{not json']], async (url) => {
    await assert.rejects(createAgent({ id: 'a' }).run({ input: 'x', client: createOpenAICompatibleClient({ baseUrl: url }) }), /malformed response body/);
  });
  await serve([[0]], async (url) => {
    const started = Date.now();
    await assert.rejects(createAgent({ id: 'a' }).run({ input: 'x', client: createGatewayAgentClient({ apiKey: KEY, baseUrl: url, timeoutMs: 200 }) }), /timed out/);
    assert.ok(Date.now() - started < 2000);
  });
});

test("gateway: the product's options — clientOptions, preset, body options, requestOptions (the agent's fields win)", async () => {
  await serve([
    responsesReply([{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'one' }] }]),
    responsesReply([{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'two' }] }]),
  ], async (url, requests) => {
    const client = createGatewayAgentClient({
      clientOptions: { apiKey: KEY, baseURL: url, timeoutMs: 5000, headers: { 'x-team': 'desk' } },
      preset: 'support',
      provider: { order: ['a'] },
      reasoning: { effort: 'low' },
      temperature: 0.2,
      maxOutputTokens: 99,
      parallelToolCalls: false,
      metadata: { app: 'desk' },
      user: 'u-1',
      responseFormat: { type: 'json_object' },
      toolChoice: 'auto',
      requestOptions: { store: true, service_tier: 'flex', temperature: 0.9, model: 'from-request-options', user: 'lost' },
    });
    const first = await createAgent({ id: 'a' }).run({ input: 'x', client });
    assert.equal(first.output, 'one');
    const body = requests[0].body;
    assert.equal(requests[0].headers.authorization, `Bearer ${KEY}`);
    assert.equal(requests[0].headers['x-team'], 'desk');
    assert.equal(body.model, '@support');
    assert.deepEqual(
      [body.provider, body.reasoning, body.temperature, body.max_output_tokens, body.parallel_tool_calls, body.metadata, body.user, body.response_format, body.tool_choice, body.store, body.service_tier],
      [{ order: ['a'] }, { effort: 'low' }, 0.2, 99, false, { app: 'desk', phaseo_agent_id: 'a' }, 'u-1', { type: 'json_object' }, 'auto', true, 'flex'],
    );
    // What the agent and run set wins over the client's defaults.
    await createAgent({ id: 'a', model: 'phaseo/own', temperature: 0.5 }).run({ input: 'x', client, maxOutputTokens: 7 });
    const own = requests[1].body;
    assert.deepEqual([own.model, own.temperature, own.max_output_tokens, own.store], ['phaseo/own', 0.5, 7, true]);
  });
});

test('HTTP client options: wrong values are refused by the core naming the field', () => {
  const refused = [
    [() => createOpenAICompatibleClient({ timeoutMs: -5 }), 'Invalid HTTP client options: timeoutMs must be a positive number of milliseconds, got -5'],
    [() => createGatewayAgentClient({ apiKey: KEY, headers: { 'X-N': 5 } }), 'Invalid HTTP client options: headers.X-N must be a string, got 5'],
    [() => createGatewayAgentClient({ apiKey: 7 }), 'Invalid HTTP client options: apiKey must be a string, got 7'],
  ];
  for (const [make, message] of refused) {
    assert.throws(make, (e) => e.code === 'definition_invalid' && e.message === message, message);
  }
});

test('HTTP client options: unknown keys and unsupported product options are refused by name', () => {
  const refused = [
    [() => createGatewayAgentClient({ apikey: KEY }), "Invalid HTTP client options: unknown option 'apikey' (known: apiKey, baseUrl,"],
    [() => createGatewayAgentClient({ clientOptions: { apiKey: KEY, retries: 2 } }), "Invalid HTTP client options: unknown clientOptions option 'retries'"],
    [() => createGatewayAgentClient({ clientOptions: { fetchImpl: fetch } }), 'Invalid HTTP client options: clientOptions.fetchImpl is not supported'],
    [() => createGatewayAgentClient({ client: { fetch } }), 'Invalid HTTP client options: client (an SDK instance) is not supported: pass clientOptions instead'],
    [() => createGatewayAgentClient({ gatewayTools: [] }), 'Invalid HTTP client options: gatewayTools is not supported'],
    [() => createGatewayAgentClient({ requestOptions: [1] }), 'Invalid HTTP client options: requestOptions must be an object of request body fields, got [1]'],
    [() => createGatewayAgentClient({ preset: '' }), 'Invalid HTTP client options: preset must be a non-empty name, got ""'],
    [() => createOpenAICompatibleClient({ toolChoice: 'auto' }), 'Invalid HTTP client options: preset, requestOptions and the body options'],
  ];
  for (const [make, message] of refused) {
    assert.throws(make, (e) => e.code === 'definition_invalid' && e.message.startsWith(message), message);
  }
});
