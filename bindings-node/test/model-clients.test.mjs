// Host model clients (docs/behaviour.md §8): a function, an object with generate(request), and one
// with stream(request) whose deltas and items a streamed run shows live, in order.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AgentModelError, createAgent, defineTool } from '../index.mjs';
import { call, calls, RecordingClient } from './helpers.mjs';

const withTimeout = (promise, ms, what) => Promise.race([
  promise,
  new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out: ${what}`)), ms).unref()),
]);

const STREAMED = new Set(['response.output_text.delta', 'response.reasoning.delta', 'response.item', 'model.requested', 'model.completed', 'model.failed']);
const brief = (e) => (e.type === 'response.item' ? `item:${e.item.type}` : e.delta !== undefined ? `${e.type.split('.')[1]}:${e.delta}` : e.type);

test('a client stream(request) shows its deltas and items live, in order', async () => {
  let sawFirstDelta;
  const firstDeltaSeen = new Promise((resolve) => { sawFirstDelta = resolve; });
  const requests = [];
  const client = {
    generate() { throw new Error('generate is not used for a streamed run'); },
    async *stream(request) {
      requests.push(request);
      yield { type: 'reasoning-delta', delta: 'thinking' };
      yield { type: 'text-delta', delta: 'Hel' };
      // The run's listener sees 'Hel' before the client goes on: the deltas are live.
      await withTimeout(firstDeltaSeen, 5000, 'the first delta never reached onEvent while the client streamed');
      yield { type: 'text-delta', delta: 'lo' };
      yield { type: 'item', item: { type: 'reasoning', text: 'thinking' } };
      yield { type: 'item', item: { type: 'message', role: 'assistant', content: 'Hello' } };
      yield { type: 'response', response: { message: { content: 'Hello', reasoning: 'thinking' }, usage: { inputTokens: 3, outputTokens: 2 } } };
    },
  };
  const events = [];
  const stream = createAgent({ id: 'a' }).stream({
    input: 'hi',
    client,
    onEvent: (e) => { events.push(e); if (e.type === 'response.output_text.delta' && e.delta === 'Hel') sawFirstDelta(); },
  });
  const text = [];
  for await (const delta of stream.getTextStream()) text.push(delta);
  const result = await stream.getResult();
  assert.deepEqual(text, ['Hel', 'lo']);
  assert.equal(await stream.getText(), 'Hello');
  assert.equal(result.output, 'Hello');
  assert.equal(result.usage.totalTokens, 5);
  assert.equal(requests[0].stream, true);
  assert.deepEqual(events.filter((e) => STREAMED.has(e.type)).map(brief), [
    'model.requested', 'reasoning:thinking', 'output_text:Hel', 'output_text:lo', 'item:reasoning', 'item:message', 'model.completed', 'item:output',
  ]);
  const items = [];
  for await (const item of stream.getItemsStream()) items.push(item.type);
  assert.deepEqual(items, ['reasoning', 'message', 'output']);
});

test('a client failing mid-stream is retried: its deltas stay in the history, the output is the retry', async () => {
  let attempt = 0;
  const client = {
    async *stream() {
      attempt += 1;
      if (attempt === 1) {
        yield { type: 'text-delta', delta: 'Broken ' };
        throw new Error('connection reset');
      }
      yield { type: 'text-delta', delta: 'Fine ' };
      yield { type: 'text-delta', delta: 'answer' };
      yield { type: 'response', response: { text: 'Fine answer' } };
    },
  };
  const stream = createAgent({ id: 'a', modelRetry: { maxRetries: 1, backoffMs: 1 } }).stream({ input: 'hi', client });
  const events = [];
  for await (const e of stream.getEventStream()) events.push(e);
  assert.deepEqual(events.filter((e) => STREAMED.has(e.type)).map(brief), [
    // The client streamed no items: the run derives them from the response.
    'model.requested', 'output_text:Broken ', 'model.requested', 'output_text:Fine ', 'output_text:answer', 'model.completed', 'item:message', 'item:output',
  ]);
  assert.equal(await stream.getText(), 'Fine answer');
  const result = await stream.getResult();
  assert.equal(result.output, 'Fine answer');
  assert.equal(result.stepResults[0].text, 'Fine answer');
  assert.equal(result.steps[0].modelAttempts, 2);
  assert.deepEqual(result.run.messages.map((m) => m.content), ['hi', 'Fine answer']);
});

test('a stream that breaks its contract fails the attempt with a clear error', async () => {
  const cases = [
    [{ async *stream() { yield { type: 'text', delta: 'x' }; } }, 'unknown model stream event type "text"'],
    [{ async *stream() { yield { type: 'text-delta', delta: 'x' }; } }, 'without a final'],
    [{ stream() { return 42; } }, 'must return an AsyncIterable'],
    [{ async *stream() { const cycle = {}; cycle.self = cycle; yield cycle; } }, 'yielded a value that cannot be read'],
  ];
  for (const [client, message] of cases) {
    const error = await createAgent({ id: 'a' }).stream({ input: 'hi', client }).getResult().catch((e) => e);
    assert.ok(error instanceof AgentModelError, String(error));
    assert.equal(error.code, 'model_failed');
    assert.ok(error.message.includes(message), `${error.message} should include ${message}`);
    assert.equal(error.result.run.status, 'failed');
  }
});

test('a plain function (sync or async) is a client; a stream-only client serves a run that is not streamed', async () => {
  const echo = defineTool({ id: 'echo', execute: (input) => input });
  const agent = createAgent({ id: 'a', tools: [echo] });
  let turn = 0;
  const fn = (request) => (turn++ === 0 ? calls(call('c1', 'echo', { n: request.messages.length })) : { text: 'sync done' });
  assert.equal((await agent.run({ input: 'x', client: fn })).output, 'sync done');
  const asyncFn = async (request) => ({ text: `async ${request.agentId}` });
  assert.equal((await agent.run({ input: 'x', client: asyncFn })).output, 'async a');
  const streamOnly = { async *stream() { yield { type: 'text-delta', delta: 'ignored' }; yield { type: 'response', response: { text: 'drained' } }; } };
  const events = [];
  const result = await agent.run({ input: 'x', client: streamOnly, onEvent: (e) => events.push(e.type) });
  assert.equal(result.output, 'drained');
  assert.equal(events.includes('response.output_text.delta'), false);
  turn = 1;
  assert.equal(await agent.stream({ input: 'x', client: fn }).getText(), 'sync done');
});

test('a cancelled streamed run stops reading the client stream', async () => {
  let closed = false;
  let yielded = 0;
  const client = {
    async *stream() {
      try {
        for (;;) {
          yielded += 1;
          yield { type: 'text-delta', delta: 'x' };
          await new Promise((r) => setTimeout(r, 5));
        }
      } finally {
        closed = true;
      }
    },
  };
  const stream = createAgent({ id: 'a' }).stream({ input: 'hi', client });
  for await (const delta of stream.getTextStream()) { assert.equal(delta, 'x'); break; }
  const result = await stream.cancel('enough');
  assert.equal(result.run.status, 'cancelled');
  await withTimeout((async () => { while (!closed) await new Promise((r) => setTimeout(r, 5)); })(), 5000, 'the client stream was never closed');
  const after = yielded;
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(yielded, after);
});
test('a custom client may return tool calls with a parsed input instead of arguments text', async () => {
  const seen = [];
  const lookup = defineTool({ id: 'lookup', execute: (input) => { seen.push(input); return 'ok'; } });
  const agent = createAgent({ id: 'a', tools: [lookup] });
  const client = new RecordingClient([
    { message: { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'lookup', input: { ticket: 7 } }] } },
    { toolCalls: [{ id: 'c2', name: 'lookup', input: { ticket: 8 } }] },
    { text: 'done' },
  ]);
  const result = await agent.run({ input: 'x', client });
  assert.equal(result.output, 'done');
  assert.deepEqual(seen, [{ ticket: 7 }, { ticket: 8 }]);
});

test('request.signal aborts when a run waiting on generate(request) is cancelled', async () => {
  let signal;
  const client = {
    generate(request) {
      signal = request.signal;
      assert.equal(signal.aborted, false);
      assert.equal(Object.keys(request).includes('signal'), false);
      return new Promise((resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
    },
  };
  const controller = new AbortController();
  const pending = createAgent({ id: 'a' }).run({ input: 'hi', client, signal: controller.signal });
  await withTimeout((async () => { while (!signal) await new Promise((r) => setTimeout(r, 2)); })(), 5000, 'generate was never called');
  controller.abort();
  const result = await withTimeout(pending, 5000, 'the cancelled run never settled');
  assert.equal(result.run.status, 'cancelled');
  await withTimeout((async () => { while (!signal.aborted) await new Promise((r) => setTimeout(r, 2)); })(), 5000, 'request.signal never aborted');
});
