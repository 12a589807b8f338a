import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  AgentContinueError, AgentDefinitionError, AgentError, AgentModelError, AgentSchemaValidationError, AgentStateError,
  AgentToolError, AgentToolTimeoutError, AgentUnknownToolError, AgentLeaseLostError, AgentMcpError, AgentStoreError, errorClass, createAgent, createScriptedClient, defineTool, parseState,
} from '../index.mjs';
import { call, calls } from './helpers.mjs';

const agentWith = (execute, extra = {}) => createAgent({ id: 'a', tools: [defineTool({ id: 't', execute, ...extra })] });

test('a throwing tool fails the run with the failed state attached', async () => {
  await assert.rejects(
    agentWith(() => { throw new Error('disk full'); }).run({ input: 'go', client: createScriptedClient([calls(call('c1', 't'))]) }),
    (error) => {
      assert.ok(error instanceof AgentToolError && error instanceof AgentError);
      assert.equal(error.code, 'tool_failed');
      assert.equal(error.message, 'disk full');
      assert.equal(error.result.run.status, 'failed');
      assert.deepEqual(error.result.run.error, { code: 'tool_failed', message: 'disk full' });
      return true;
    },
  );
});

test('a rejected promise and a non-Error throw are returned to the model', async () => {
  const result = await agentWith(async () => { throw 'plain string'; }, { onError: 'return-to-model' })
    .run({ input: 'go', client: createScriptedClient([calls(call('c1', 't')), { text: 'sorry' }]) });
  assert.equal(result.run.messages.find((m) => m.role === 'tool').content, '{"error":"plain string"}');
});

test('timeouts, unknown tools, schema errors, model failures', async () => {
  await assert.rejects(agentWith(() => new Promise(() => {}), { timeoutMs: 30 }).run({ input: 'go', client: createScriptedClient([calls(call('c1', 't'))]) }),
    (e) => e instanceof AgentToolTimeoutError && e.message === 'Tool t timed out after 30ms');
  await assert.rejects(agentWith(() => 1).run({ input: 'go', client: createScriptedClient([calls(call('c1', 'nope'))]) }),
    (e) => e instanceof AgentUnknownToolError && e.message === "Unknown tool 'nope'");
  const typed = agentWith(() => 1, { parameters: { type: 'object', properties: { n: { type: 'integer' } } } });
  await assert.rejects(typed.run({ input: 'go', client: createScriptedClient([calls(call('c1', 't', { n: 'x' }))]) }),
    (e) => e instanceof AgentSchemaValidationError && e.target === 'tool_input' && e.message.startsWith('Invalid tool input: /n: '));
  let attempts = 0;
  const flaky = { generate() { attempts++; throw new Error('upstream down'); } };
  await assert.rejects(createAgent({ id: 'a', modelRetry: { maxRetries: 2, backoffMs: 1 } }).run({ input: 'hi', client: flaky }),
    (e) => e instanceof AgentModelError && e.code === 'model_failed' && e.message === 'upstream down');
  assert.equal(attempts, 3);
});

test('definition errors are raised when defining', () => {
  assert.throws(() => defineTool({ id: 'bad', parameters: { type: 5 } }), AgentDefinitionError);
  assert.throws(() => defineTool({ id: 'neg', execute: () => 1, timeoutMs: -1 }), AgentDefinitionError);
  const t = defineTool({ id: 'dup', execute: () => 1 });
  assert.throws(() => createAgent({ id: 'a', tools: [t, t] }), /duplicate tool id 'dup'/);
  assert.throws(() => createAgent({ id: 'a', toolz: [] }), AgentDefinitionError);
});

test('pause, JSON state, refused continue loses nothing, continue completes', async () => {
  const agent = createAgent({
    id: 'desk',
    tools: [
      defineTool({ id: 'refund', execute: (i) => ({ refunded: i.amount }), requireApproval: (i) => i.amount > 100 }),
      defineTool({ id: 'escalate', execute: false, onResponseReceived: (out) => ({ answer: out }) }),
    ],
  });
  const client = createScriptedClient([calls(call('c1', 'refund', { amount: 150 }), call('c2', 'escalate'), call('c3', 'refund', { amount: 5 })), { text: 'all done' }]);
  const paused = await agent.run({ input: 'help', client });
  assert.equal(paused.run.status, 'waiting_for_human');
  assert.equal(paused.run.pause.kind, 'tool_approval');
  assert.deepEqual(paused.run.pause.pendingToolCalls.map((p) => [p.call.id, p.kind]), [['c1', 'approval'], ['c2', 'manual']]);
  const text = JSON.stringify(paused);
  await assert.rejects(agent.continueRun({ state: text, client, approvals: ['c1'] }),
    (e) => e instanceof AgentContinueError && e.message === 'Missing output for tool call c2' && e.result === undefined);
  assert.equal(JSON.stringify(paused), text);
  const done = await agent.continueRun({ run: JSON.parse(text), client, approvals: ['c1'], toolOutputs: [{ toolCallId: 'c2', output: 'on it' }] });
  assert.equal(done.output, 'all done');
  assert.deepEqual(done.run.messages.filter((m) => m.role === 'tool').map((m) => [m.toolCallId, m.content]),
    [['c1', '{"refunded":150}'], ['c2', '{"answer":"on it"}'], ['c3', '{"refunded":5}']]);
});

test('invalid state is refused', () => {
  assert.throws(() => parseState('{"version": 99, "run": {}}'), (e) => e instanceof AgentStateError && /unsupported version 99/.test(e.message));
  assert.throws(() => parseState('{'), AgentStateError);
});

test('a pending run keeps Node alive by itself until it ends (JS timer, tool timeout)', () => {
  const script = fileURLToPath(new URL('../test-fixtures/stays-alive.mjs', import.meta.url));
  const done = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 20000 });
  assert.equal(done.status, 0, done.stderr);
  const [napOutput, napTool, stuckOutput, stuckTool] = JSON.parse(done.stdout.trim());
  assert.equal(napOutput, 'done');
  assert.equal(napTool, 'rested');
  assert.equal(stuckOutput, 'done');
  assert.match(stuckTool, /timed out after 50ms/);
});

test('a script exits by itself after runs (no handle keeps Node alive)', () => {
  const script = fileURLToPath(new URL('../test-fixtures/exits.mjs', import.meta.url));
  const started = Date.now();
  const done = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 20000 });
  assert.equal(done.status, 0, done.stderr);
  assert.equal(done.stdout.trim(), 'completed 5');
  assert.ok(Date.now() - started < 10000);
});

test('every error code of the state schema has its own error class (store_failed, lease_lost, mcp_failed included)', async () => {
  const { readFileSync } = await import('node:fs');
  const schema = JSON.parse(readFileSync(fileURLToPath(new URL('../../core/state.schema.json', import.meta.url)), 'utf8'));
  const codes = schema.$defs.errorCode.enum;
  assert.deepEqual(codes.slice(-3), ['store_failed', 'lease_lost', 'mcp_failed']);
  for (const code of codes) {
    const Class = errorClass(code);
    assert.notEqual(Class, AgentError, `${code} has no class of its own`);
    assert.ok(new Class('m', { code }) instanceof AgentError);
  }
  assert.equal(errorClass('mcp_failed'), AgentMcpError);
  assert.equal(errorClass('store_failed'), AgentStoreError);
  assert.equal(errorClass('lease_lost'), AgentLeaseLostError);
  assert.equal(errorClass('no_such_code'), AgentError);
  assert.equal(errorClass('toString'), AgentError);
});
