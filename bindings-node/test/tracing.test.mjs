// Tracing from Node against a real OTLP/HTTP receiver on 127.0.0.1
// (tests/otlp/receiver.py, decoding with opentelemetry-proto): span names, GenAI attributes,
// the span tree, a timeout, a continue in the same trace, the host's `@opentelemetry/api`
// span as parent, content only on opt-in.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AgentToolTimeoutError, createAgent, createScriptedClient, defineTool, enableTracing, flushTracing, shutdownTracing,
} from '../index.mjs';
import { call, calls } from './helpers.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const python = process.env.PHASEO_PYTHON || path.join(root, '.venvs/py/bin/python');
let receiver;
let base;

before(async () => {
  receiver = spawn(python, [path.join(root, 'tests/otlp/receiver.py')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: receiver.stdout });
  const port = await new Promise((resolve, reject) => {
    receiver.once('exit', (code) => reject(new Error(`the OTLP receiver exited (${code}): is opentelemetry-proto installed (make .venvs/py/.otel)?`)));
    lines.once('line', (line) => resolve(line.replace('PORT ', '')));
  });
  base = `http://127.0.0.1:${port}`;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});

after(async () => {
  await shutdownTracing();
  receiver.stdin.end();
});

const enable = (captureContent = false) =>
  enableTracing({ endpoint: base, headers: { 'x-collector-token': 'node-token' }, serviceName: 'node-tests', captureContent });

const ids = (result) => {
  const [version, traceId, spanId, flags] = result.run.traceparent.split('-');
  assert.deepEqual([version, flags], ['00', '01']);
  return { traceId, spanId };
};

async function spansOf(result, count) {
  await flushTracing();
  const { traceId } = ids(result);
  for (let i = 0; i < 500; i++) {
    const all = await (await fetch(`${base}/spans`)).json();
    const found = all.filter((s) => s.traceId === traceId);
    if (found.length >= count) return found;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`fewer than ${count} spans in trace ${traceId}`);
}

const one = (spans, name) => {
  const found = spans.filter((s) => s.name === name);
  assert.equal(found.length, 1, `${name}: ${JSON.stringify(spans)}`);
  return found[0];
};

const calculator = () => createAgent({
  id: 'calculator',
  tools: [defineTool({ id: 'add', execute: (i) => i.a + i.b })],
});
const runCalculator = () => calculator().run({
  input: 'what is 2+3?', model: 'm-1',
  client: createScriptedClient([calls(call('c1', 'add', { a: 2, b: 3 })), { text: 'the sum is 5' }]),
});

test('a run with a tool step is one tree of GenAI spans, content off', async () => {
  enable();
  const result = await runCalculator();
  const spans = await spansOf(result, 4);
  assert.deepEqual(spans.map((s) => s.name).sort(), ['chat m-1', 'chat m-1', 'execute_tool add', 'invoke_agent calculator']);
  const run = one(spans, 'invoke_agent calculator');
  assert.equal(run.spanId, ids(result).spanId);
  assert.equal(run.parentSpanId, '');
  assert.equal(run.attributes['gen_ai.operation.name'], 'invoke_agent');
  assert.equal(run.attributes['phaseo.run.id'], result.run.id);
  assert.equal(run.service, 'node-tests');
  assert.equal(run.headers['x-collector-token'], 'node-token');
  const tool = one(spans, 'execute_tool add');
  assert.equal(tool.parentSpanId, run.spanId);
  assert.equal(tool.attributes['gen_ai.tool.type'], 'function');
  assert.equal(tool.attributes['gen_ai.tool.call.id'], 'c1');
  for (const s of spans) {
    const text = JSON.stringify(s.attributes);
    assert.ok(!text.includes('what is 2+3?') && !text.includes('node-token'), text);
    assert.equal(s.attributes['gen_ai.tool.call.arguments'], undefined);
  }
});

test('content is recorded when opted in', async () => {
  enable(true);
  const spans = await spansOf(await runCalculator(), 4);
  enable();
  const tool = one(spans, 'execute_tool add');
  assert.deepEqual(JSON.parse(tool.attributes['gen_ai.tool.call.arguments']), { a: 2, b: 3 });
  assert.equal(tool.attributes['gen_ai.tool.call.result'], '5');
});

test('a timeout sets error.type on the tool and the run', async () => {
  enable();
  const agent = createAgent({ id: 'sleeper', tools: [defineTool({ id: 'slow', execute: () => new Promise(() => {}), timeoutMs: 30 })] });
  const error = await agent.run({ input: 'go', client: createScriptedClient([calls(call('c1', 'slow'))]) }).catch((e) => e);
  assert.ok(error instanceof AgentToolTimeoutError);
  const spans = await spansOf(error.result, 3);
  assert.equal(one(spans, 'execute_tool slow').attributes['error.type'], 'tool_timeout');
  assert.equal(one(spans, 'invoke_agent sleeper').attributes['error.type'], 'tool_timeout');
});

test('a continue from the JSON state lands in the same trace, linked', async () => {
  enable();
  const agent = createAgent({ id: 'mailer', tools: [defineTool({ id: 'send', execute: () => 'sent', requireApproval: true })] });
  const paused = await agent.run({ input: 'mail', client: createScriptedClient([calls(call('c1', 'send'))]) });
  assert.equal(paused.run.status, 'waiting_for_human');
  const done = await agent.continueRun({ state: JSON.stringify(paused), client: createScriptedClient([{ text: 'ok' }]), approvals: ['c1'] });
  const first = ids(paused);
  const second = ids(done);
  assert.equal(second.traceId, first.traceId);
  const spans = await spansOf(done, 5);
  const resumed = spans.find((s) => s.spanId === second.spanId);
  assert.equal(resumed.parentSpanId, first.spanId);
  assert.deepEqual(resumed.links, [{ traceId: first.traceId, spanId: first.spanId }]);
  assert.equal(one(spans, 'execute_tool send').attributes['phaseo.tool.approval'], 'approved');
});

test("the host's active @opentelemetry/api span is the parent of a run", async () => {
  enable();
  const host = trace.wrapSpanContext({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1 });
  const result = await context.with(trace.setSpan(context.active(), host), () => runCalculator());
  assert.equal(ids(result).traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
  const run = one(await spansOf(result, 4), 'invoke_agent calculator');
  assert.equal(run.parentSpanId, '00f067aa0ba902b7');
  const outside = await runCalculator();
  assert.equal(one(await spansOf(outside, 4), 'invoke_agent calculator').parentSpanId, '');
});

test('bad options are refused by name', () => {
  assert.throws(() => enableTracing({ endpoint: 'not a url' }), /endpoint 'not a url'/);
  assert.throws(() => enableTracing({ endpont: 'x' }), /unknown option 'endpont'/);
});
