import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAgent, createScriptedClient, defineTool } from '../index.mjs';
import { call, calls, sleep, RecordingClient } from './helpers.mjs';

async function runOne(execute, extra = {}) {
  const events = [];
  const agent = createAgent({ id: 'a', tools: [defineTool({ id: 't', execute, ...extra })] });
  const result = await agent.run({ input: 'go', client: createScriptedClient([calls(call('c1', 't', { x: 2 })), { text: 'done' }]), onEvent: (e) => events.push(e) });
  const output = events.find((e) => e.type === 'tool.completed')?.output;
  const progress = events.filter((e) => e.type === 'tool.preliminary_result').map((e) => e.result);
  return { result, output, progress, events };
}

test('sync, async and async-generator executors', async () => {
  assert.equal((await runOne((input) => input.x * 2)).output, 4);
  assert.equal((await runOne(async (input) => { await sleep(1); return input.x + 1; })).output, 3);
  const gen = await runOne(async function* (input) {
    yield { phase: 'scan' };
    yield { phase: 'embed' };
    return { indexed: input.x };
  });
  assert.deepEqual(gen.progress, [{ phase: 'scan' }, { phase: 'embed' }]);
  assert.deepEqual(gen.output, { indexed: 2 });
  assert.deepEqual(gen.result.stepResults[0].toolResults[0].preliminaryResults, [{ phase: 'scan' }, { phase: 'embed' }]);
});

test('context: runtime fields, emitProgress and setContext', async () => {
  let seen;
  const agent = createAgent({
    id: 'ctx-agent',
    tools: [defineTool({ id: 't', execute(input, ctx) { seen = { ...ctx, signal: ctx.signal }; ctx.emitProgress(1); ctx.setContext({ user: 'ana', n: 2 }); return 'ok'; } })],
  });
  const client = new RecordingClient([calls(call('c1', 't', { a: 1 })), { text: 'done' }]);
  const result = await agent.run({ input: 'go', client, context: { user: 'ana' } });
  assert.equal(seen.runId, result.run.id);
  assert.equal(seen.agentId, 'ctx-agent');
  assert.equal(seen.stepIndex, 0);
  assert.deepEqual(seen.toolCall, { id: 'c1', name: 't', input: { a: 1 } });
  assert.deepEqual(seen.context, { user: 'ana' });
  assert.ok(seen.signal instanceof AbortSignal);
  assert.deepEqual(result.run.context, { user: 'ana', n: 2 });
  assert.deepEqual(client.requests[1].context, { user: 'ana', n: 2 });
  assert.deepEqual(client.requests[1].messages.at(-1), { role: 'tool', content: 'ok', toolCallId: 'c1', name: 't' });
});

test('the signal aborts on timeout and the run goes on under return-to-model', async () => {
  let aborted = false;
  const started = Date.now();
  const { result } = await runOne(
    (input, ctx) => new Promise((resolve) => {
      const timer = setTimeout(() => resolve('late'), 5000);
      ctx.signal.addEventListener('abort', () => { aborted = true; clearTimeout(timer); resolve('stopped'); });
    }),
    // 1 s away, so that the executor has begun (and listens for the abort) even on a loaded machine.
    { timeoutMs: 1000, onError: 'return-to-model' },
  );
  assert.ok(Date.now() - started < 2500);
  assert.equal(aborted, true);
  assert.equal(result.run.status, 'completed');
  const toolMessage = result.run.messages.find((m) => m.role === 'tool');
  assert.deepEqual(toolMessage, { role: 'tool', content: '{"error":"Tool t timed out after 1000ms"}', toolCallId: 'c1', name: 't', isError: true });
});

test('1,000 concurrent async tools all run at once (deadlock canary), results in call order', async () => {
  // Every call waits until all 1,000 have started: this only finishes if they truly overlap.
  let started = 0;
  let releaseAll;
  const allStarted = new Promise((resolve) => { releaseAll = resolve; });
  const agent = createAgent({
    id: 'a',
    toolExecution: { toolConcurrency: 1000 },
    tools: [defineTool({ id: 't', async execute(input) { if (++started === 1000) releaseAll(); await allStarted; await sleep(1); return input.i; } })],
  });
  const list = Array.from({ length: 1000 }, (_, i) => call(`c${i}`, 't', { i }));
  const result = await agent.run({ input: 'go', client: createScriptedClient([calls(...list), { text: 'done' }]) });
  assert.equal(result.run.status, 'completed');
  assert.equal(started, 1000);
  const ids = result.run.messages.filter((m) => m.role === 'tool').map((m) => m.toolCallId);
  assert.deepEqual(ids, list.map((c) => c.id));
});

test('dynamic instructions and async host model with usage', async () => {
  const client = new RecordingClient([
    { message: { content: '', toolCalls: [call('c1', 't')] }, usage: { inputTokens: 2, outputTokens: 1 }, cost: 0.5 },
    { message: { content: 'done' }, usage: { inputTokens: 3, outputTokens: 2 }, cost: 0.25 },
  ]);
  const agent = createAgent({ id: 'a', instructions: (turn) => `turn ${turn.numberOfTurns}`, temperature: 0.3, tools: [defineTool({ id: 't', execute: () => 1 })] });
  const result = await agent.run({ input: 'go', client });
  assert.deepEqual(client.requests.map((r) => r.instructions), ['turn 1', 'turn 2']);
  assert.equal(client.requests[0].temperature, 0.3);
  assert.deepEqual(result.usage, { inputTokens: 5, outputTokens: 3, cachedTokens: 0, totalTokens: 8, cost: 0.75 });
});
