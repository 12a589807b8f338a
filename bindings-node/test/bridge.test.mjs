// The bridge batches calls (one PHASE entry carries the runtime data shared by the calls
// of a tool phase) and answers (one text for many): what every call sees must stay its own.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAgent, createScriptedClient, defineTool } from '../index.mjs';
import { call, calls, sleep } from './helpers.mjs';

const fanOut = (name, n, args = (i) => ({ i })) => calls(...Array.from({ length: n }, (_, i) => call(`c${i}`, name, args(i))));

test('each call gets its own input, toolCall and context, whatever the batch', async () => {
  const seen = [];
  const tool = defineTool({
    id: 'touch',
    execute: async (input, ctx) => {
      const own = { inputIsCallInput: input === ctx.toolCall.input, contextBefore: JSON.stringify(ctx.context) };
      input.i = -1;
      ctx.context.list.push(ctx.toolCall.id);
      await sleep(1);
      seen.push({ ...own, callInput: ctx.toolCall.input.i, id: ctx.toolCall.id, name: ctx.toolCall.name, list: ctx.context.list.length });
      return 'ok';
    },
  });
  const agent = createAgent({ id: 'iso', tools: [tool], toolExecution: { toolConcurrency: 300 } });
  const result = await agent.run({ input: 'go', context: { list: [] }, client: createScriptedClient([fanOut('touch', 300), { text: 'done' }]) });
  assert.equal(result.output, 'done');
  assert.equal(seen.length, 300);
  for (const s of seen) {
    assert.equal(s.inputIsCallInput, false);
    assert.equal(s.contextBefore, '{"list":[]}');
    assert.equal(s.list, 1);
    assert.equal(s.callInput, Number(s.id.slice(1)));
    assert.equal(s.name, 'touch');
  }
  assert.deepEqual(result.run.context, { list: [] });
});

test('concurrent runs in one batch keep their own run ids, steps and contexts', async () => {
  const tool = defineTool({ id: 'who', execute: (_input, ctx) => ({ runId: ctx.runId, agentId: ctx.agentId, step: ctx.stepIndex, ctx: ctx.context }) });
  const agents = ['a1', 'a2', 'a3'].map((id) => createAgent({ id, tools: [tool], toolExecution: { toolConcurrency: 50 } }));
  const results = await Promise.all(agents.map((agent, k) => agent.run({
    input: 'go',
    context: k === 1 ? { k } : k,
    client: createScriptedClient([fanOut('who', 40), fanOut('who', 3), { text: 'done' }]),
  })));
  results.forEach((result, k) => {
    const outs = result.stepResults.flatMap((s) => s.toolResults.map((r) => r.result));
    assert.equal(outs.length, 43);
    for (const out of outs) {
      assert.equal(out.runId, result.run.id);
      assert.equal(out.agentId, `a${k + 1}`);
      assert.deepEqual(out.ctx, k === 1 ? { k } : k);
    }
    assert.deepEqual(result.stepResults.map((s) => new Set(s.toolResults.map((r) => r.result.step)).size), [1, 1, 0]);
    assert.deepEqual(result.stepResults.map((s) => s.toolResults[0]?.result.step), [0, 1, undefined]);
  });
});

test('values and error messages with line breaks, quotes and odd characters cross intact', async () => {
  const texts = ['two\nlines', 'cr\r\nlf', 'quote " and \\ backslash', 'tab\there', 'émoji 🎉', '\u2028\u2029', ''];
  const echo = defineTool({ id: 'echo', execute: ({ i }) => ({ text: texts[i], list: [texts[i]] }) });
  const boom = defineTool({ id: 'boom', execute: async ({ i }) => { throw new Error(texts[i]); }, onError: 'return-to-model' });
  const agent = createAgent({ id: 'odd', tools: [echo, boom], toolExecution: { toolConcurrency: 20 } });
  const n = texts.length;
  const result = await agent.run({
    input: 'go',
    client: createScriptedClient([
      calls(...texts.map((_, i) => call(`e${i}`, 'echo', { i })), ...texts.map((_, i) => call(`b${i}`, 'boom', { i }))),
      { text: 'done' },
    ]),
  });
  const results = result.stepResults[0].toolResults;
  for (let i = 0; i < n; i++) {
    assert.deepEqual(results[i].result, { text: texts[i], list: [texts[i]] });
    assert.equal(results[n + i].error, texts[i] || 'Error');
  }
});

test('a lone surrogate in an error message becomes U+FFFD', async () => {
  const tool = defineTool({ id: 't', execute: () => { throw new Error('bad \ud800 end'); }, onError: 'return-to-model' });
  const result = await createAgent({ id: 's', tools: [tool] })
    .run({ input: 'go', client: createScriptedClient([calls(call('c1', 't')), { text: 'done' }]) });
  assert.equal(result.stepResults[0].toolResults[0].error, 'bad \ufffd end');
});

test('every event of 1,500 concurrent runs (with streams beside them) reaches its listener before the run settles', async () => {
  const tool = defineTool({ id: 't', execute: async () => { await new Promise((r) => setImmediate(r)); return 1; } });
  const agent = createAgent({ id: 'a', tools: [tool], toolExecution: { toolConcurrency: 4 } });
  const client = () => createScriptedClient([{ toolCalls: [call('a', 't'), call('b', 't')] }, { text: 'done' }]);
  const expected = [];
  await agent.run({ input: 'go', client: client(), onEvent: (e) => expected.push(e.type) });
  // Streams queue their events from runtime threads, so DRAIN calls are in flight meanwhile.
  const streams = Array.from({ length: 50 }, () => agent.stream({ input: 'go', client: client(), onEvent: () => {} }).getResult());
  const seenAtSettle = await Promise.all(Array.from({ length: 1500 }, async () => {
    const seen = [];
    await agent.run({ input: 'go', client: client(), onEvent: (e) => seen.push(e.type) });
    return seen;
  }));
  await Promise.all(streams);
  for (const seen of seenAtSettle) assert.deepEqual(seen, expected);
});

test('a worker thread gets a clear error when another thread already uses the SDK', async () => {
  const { Worker } = await import('node:worker_threads');
  const entry = new URL('../index.js', import.meta.url).pathname;
  const worker = new Worker(`try { require(${JSON.stringify(entry)}); require('node:worker_threads').parentPort.postMessage('loaded'); } catch (e) { require('node:worker_threads').parentPort.postMessage(e.message); }`, { eval: true });
  const message = await new Promise((resolve, reject) => { worker.once('message', resolve); worker.once('error', reject); });
  await worker.terminate();
  assert.match(message, /already loaded by another JavaScript thread/);
});
