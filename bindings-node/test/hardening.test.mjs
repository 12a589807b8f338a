// Regression tests of hostile Node input: no host value, thrown value, thenable,
// iterator or model output may kill, hang or strand a run.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  AgentModelError, AgentStateError, AgentToolError, createAgent, createScriptedClient, defineTool, jsonSchemaValidator,
  parseState,
} from '../index.mjs';
import { call, calls } from './helpers.mjs';

const SDK = fileURLToPath(new URL('../index.mjs', import.meta.url));
const UNPRINTABLE = 'a value that cannot be converted to text was thrown';

/** Runs `body` (an async module body with the SDK as `sdk`) in a child process: a crash
 * there fails the test instead of ending the test runner. Returns its stdout, parsed. */
function inChild(body, flags = []) {
  const code = `import * as sdk from ${JSON.stringify(SDK)};\n${body}`;
  const done = spawnSync(process.execPath, [...flags, '--input-type=module', '-e', code], { encoding: 'utf8', timeout: 30000 });
  assert.equal(done.signal, null, `child killed by ${done.signal}: ${done.stderr}`);
  assert.equal(done.status, 0, done.stderr);
  return JSON.parse(done.stdout.trim());
}

/** Values that cannot be turned into text the usual way (finding 1). */
function oddValues() {
  const messageThrows = new Error('hidden');
  Object.defineProperty(messageThrows, 'message', { get() { throw new Error('no message'); } });
  return {
    nullPrototype: Object.create(null),
    toStringThrows: { toString() { throw new Error('no text'); } },
    proxy: new Proxy({}, { get() { throw new Error('trap'); }, getPrototypeOf() { throw new Error('trap'); } }),
    messageThrows,
  };
}

const toolAgent = (execute, extra = {}) => createAgent({ id: 'a', tools: [defineTool({ id: 't', execute, ...extra })] });
const oneCall = () => createScriptedClient([calls(call('c1', 't')), { text: 'done' }]);
const toolResult = (result) => result.stepResults[0].toolResults[0];

test('finding 1: any thrown value of a tool becomes a tool error (the process survives)', () => {
  const outcome = inChild(`
    const odd = (${oddValues.toString()})();
    const out = {};
    for (const [name, value] of Object.entries(odd)) {
      const agent = sdk.createAgent({ id: 'a', tools: [sdk.defineTool({ id: 't', execute: () => { throw value; } })] });
      try {
        await agent.run({ input: 'go', client: sdk.createScriptedClient([{ toolCalls: [{ id: 'c1', name: 't', arguments: '{}' }] }]) });
        out[name] = 'resolved';
      } catch (error) { out[name] = [error.code, error.message]; }
    }
    console.log(JSON.stringify(out));
  `);
  for (const name of Object.keys(oddValues())) assert.deepEqual(outcome[name], ['tool_failed', UNPRINTABLE], name);
});

test('finding 1: odd rejections, thenables and throws of validators, hooks, predicates and clients', async () => {
  for (const [name, value] of Object.entries(oddValues())) {
    // A rejected promise of a tool, returned to the model.
    let result = await toolAgent(async () => { throw value; }, { onError: 'return-to-model' }).run({ input: 'go', client: oneCall() });
    assert.equal(toolResult(result).error, UNPRINTABLE, name);
    // A thenable whose `then` throws it.
    result = await toolAgent(() => ({ then() { throw value; } }), { onError: 'return-to-model' }).run({ input: 'go', client: oneCall() });
    assert.equal(toolResult(result).error, UNPRINTABLE, name);
    // A thenable that rejects with it.
    result = await toolAgent(() => ({ then(_ok, fail) { fail(value); } }), { onError: 'return-to-model' }).run({ input: 'go', client: oneCall() });
    assert.equal(toolResult(result).error, UNPRINTABLE, name);
    // An input validator (function and safeParse object), a hook and an approval predicate.
    for (const extra of [
      { inputSchema: () => { throw value; } },
      { inputSchema: { safeParse() { throw value; } } },
      { inputSchema: { safeParse: () => ({ success: false, error: value }) } },
      { onToolCalled: () => { throw value; } },
      { requireApproval: () => { throw value; } },
    ]) {
      await assert.rejects(toolAgent(() => 'ok', extra).run({ input: 'go', client: oneCall() }), (error) => {
        assert.ok(error.message.includes(UNPRINTABLE), `${name} ${Object.keys(extra)}: ${error.message}`);
        return true;
      });
    }
    // A model client that throws it, and one whose result is a throwing thenable.
    for (const generate of [() => { throw value; }, () => ({ then() { throw value; } })]) {
      await assert.rejects(createAgent({ id: 'a' }).run({ input: 'go', client: { generate } }), (error) => {
        assert.ok(error instanceof AgentModelError, name);
        assert.ok(error.message.includes(UNPRINTABLE), error.message);
        return true;
      });
    }
  }
});

test('finding 1: an onEvent listener that throws or rejects odd values only warns', () => {
  const outcome = inChild(`
    const odd = Object.values((${oddValues.toString()})());
    const warnings = [];
    process.on('warning', (w) => warnings.push(w.message));
    let n = 0;
    const onEvent = () => {
      const value = odd[n++ % odd.length];
      if (n % 3 === 0) return { then() { throw value; } };
      if (n % 3 === 1) return Promise.reject(value);
      throw value;
    };
    const result = await sdk.createAgent({ id: 'a' }).run({ input: 'go', client: sdk.createScriptedClient([{ text: 'ok' }]), onEvent });
    await new Promise((r) => setTimeout(r, 20));
    console.log(JSON.stringify({ status: result.run.status, events: n, warnings }));
  `);
  assert.equal(outcome.status, 'completed');
  assert.ok(outcome.events > 2);
  assert.ok(outcome.warnings.length > 2);
  assert.ok(outcome.warnings.every((w) => w.startsWith('onEvent listener threw: ')), outcome.warnings.join('\n'));
});

test('finding 2: deeply nested model arguments in a run that fails do not abort the process', () => {
  const outcome = inChild(`
    let args = '1';
    for (let i = 0; i < 122; i++) args = '{"a":' + args + '}';
    const agent = sdk.createAgent({ id: 'a', tools: [sdk.defineTool({ id: 't', execute: () => { throw new Error('boom'); } })] });
    try {
      await agent.run({ input: 'go', client: sdk.createScriptedClient([{ toolCalls: [{ id: 'c1', name: 't', arguments: args }] }]) });
      console.log(JSON.stringify('resolved'));
    } catch (error) {
      console.log(JSON.stringify({ code: error.code, status: error.result.run.status }));
    }
  `);
  assert.equal(outcome.status, 'failed');
  assert.equal(outcome.code, 'tool_input_invalid');
});

test('finding 5: model arguments beyond the limits are tool_input_invalid, which the model can retry', async () => {
  let deep = '1';
  for (let i = 0; i < 65; i++) deep = `[${deep}]`;
  const cases = [
    [deep, 'Invalid tool input: value is nested more than 64 levels deep'],
    ['{"n":18446744073709551616}', 'Invalid tool input: integer 18446744073709551616 does not fit in 64 bits'],
  ];
  for (const [args, message] of cases) {
    const script = () => createScriptedClient([{ toolCalls: [{ id: 'c1', name: 't', arguments: args }] }, { text: 'retried' }]);
    let ran = false;
    const execute = () => { ran = true; return 'ran'; };
    await assert.rejects(toolAgent(execute).run({ input: 'go', client: script() }), (error) => {
      assert.equal(error.code, 'tool_input_invalid');
      assert.equal(error.message, message);
      assert.equal(error.result.run.status, 'failed');
      return true;
    });
    const result = await toolAgent(execute, { onError: 'return-to-model' }).run({ input: 'go', client: script() });
    assert.equal(toolResult(result).error, message);
    assert.equal(result.output, 'retried');
    assert.equal(ran, false);
  }
});

test('finding 3: an iterator-like result that never ends is a value, not a loop', () => {
  const outcome = inChild(`
    const endless = { next: () => ({ done: false, value: 1 }), [Symbol.iterator]() { return this; }, [Symbol.asyncIterator]() { return this; }, kind: 'endless' };
    const agent = sdk.createAgent({ id: 'a', tools: [sdk.defineTool({ id: 't', timeoutMs: 2000, execute: () => endless })] });
    const result = await agent.run({ input: 'go', client: sdk.createScriptedClient([{ toolCalls: [{ id: 'c1', name: 't', arguments: '{}' }] }, { text: 'done' }]) });
    console.log(JSON.stringify(result.stepResults[0].toolResults[0].result));
  `);
  assert.deepEqual(outcome, { kind: 'endless' });
});

test('finding 3: a generator that never ends is stopped by timeoutMs and timers keep running', () => {
  const outcome = inChild(`
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const forever = sdk.defineTool({ id: 't', timeoutMs: 100, *execute() { for (;;) yield 1; } });
    const spin = sdk.defineTool({ id: 's', timeoutMs: 100, async *execute() { for (;;) yield 2; } });
    const out = [];
    const perRun = [];
    for (const tool of [forever, spin]) {
      const agent = sdk.createAgent({ id: 'a', tools: [tool] });
      const before = ticks;
      try {
        await agent.run({ input: 'go', client: sdk.createScriptedClient([{ toolCalls: [{ id: 'c1', name: tool.id, arguments: '{}' }] }]) });
        out.push('resolved');
      } catch (error) { out.push(error.code); }
      perRun.push(ticks - before);
    }
    clearInterval(timer);
    console.log(JSON.stringify({ out, perRun }));
  `);
  assert.deepEqual(outcome.out, ['tool_timeout', 'tool_timeout']);
  // A generator that kept the event loop to itself would let no tick through until its end:
  // each run must see the timer fire (how often depends on the machine's load).
  assert.ok(outcome.perRun.every((n) => n >= 1), `timers starved: ${JSON.stringify(outcome.perRun)} ticks`);
});

test('a thenable that never calls back is bounded by timeoutMs; one fulfilling with itself does not loop', async () => {
  await assert.rejects(toolAgent(() => ({ then() {} }), { timeoutMs: 50 }).run({ input: 'go', client: oneCall() }), (error) => {
    assert.equal(error.code, 'tool_timeout');
    return true;
  });
  class Odd extends Promise {
    then() { throw Object.create(null); }
  }
  await assert.rejects(toolAgent(() => Odd.resolve(1)).run({ input: 'go', client: oneCall() }), (error) => {
    assert.equal(error.code, 'tool_failed');
    assert.equal(error.message, UNPRINTABLE);
    return true;
  });
  const trap = new Proxy({}, { getPrototypeOf() { throw new Error('proto trap'); } });
  await assert.rejects(toolAgent(() => ({ then(ok) { ok(trap); } })).run({ input: 'go', client: oneCall() }), (error) => {
    assert.equal(error.message, 'proto trap');
    return true;
  });
  const selfish = { then(ok) { ok(selfish); }, name: 'me' };
  const result = await toolAgent(() => selfish, { timeoutMs: 2000 }).run({ input: 'go', client: oneCall() });
  assert.deepEqual(toolResult(result).result, { name: 'me' });
});

test('finding 5: integers beyond 2^53 reach tools and results as BigInt and a u64 usage round-trips', async () => {
  const MAX = 18446744073709551615n;
  let turn = 0;
  const client = {
    generate() {
      turn += 1;
      return turn === 1
        ? { message: { content: '', toolCalls: [{ id: 'c1', name: 't', arguments: '{"n":9007199254740993,"small":5}' }] }, usage: { inputTokens: MAX, outputTokens: 1 }, finishReason: 'tool_calls' }
        : { message: { content: 'done' }, usage: { inputTokens: 0, outputTokens: 0 }, finishReason: 'stop' };
    },
  };
  const seen = [];
  const agent = createAgent({
    id: 'a',
    tools: [defineTool({ id: 't', requireApproval: true, execute: (input) => { seen.push(input); return { twice: input.n * 2n, min: -(2n ** 63n) }; } })],
  });
  const paused = await agent.run({ input: 'go', client, context: { id: 12345678901234567890n } });
  assert.equal(paused.run.status, 'waiting_for_human');
  assert.equal(paused.run.usage.inputTokens, MAX);
  assert.equal(paused.stepResults[0].usage.inputTokens, MAX);

  const text = JSON.stringify(paused); // holds BigInts: exact text, through JSON.rawJSON or as a string
  assert.equal(parseState(text).run.usage.inputTokens, MAX);
  for (const state of [text, paused, JSON.parse(text)]) {
    turn = 1;
    const done = await agent.continueRun({ state, approvals: ['c1'], client });
    assert.equal(done.run.status, 'completed');
    assert.equal(done.run.usage.inputTokens, MAX);
    assert.deepEqual(toolResult(done).result, { twice: 18014398509481986n, min: -(2n ** 63n) });
  }
  assert.deepEqual(seen[0], { n: 9007199254740993n, small: 5 });
  assert.equal(typeof seen[0].small, 'number');

  // Events, streams and their results carry the same BigInts.
  turn = 0;
  const events = [];
  await agent.run({ input: 'go', client, onEvent: (e) => { events.push(e); } });
  assert.ok(JSON.stringify(events, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v)).includes('"18446744073709551615n"'), 'no BigInt in events');
  turn = 0;
  const stream = agent.stream({ input: 'go', client, context: { id: 12345678901234567890n } });
  const items = [];
  for await (const item of stream.getFullStream()) items.push(item);
  const streamed = await stream.getResult();
  assert.equal(streamed.run.usage.inputTokens, MAX);
  assert.equal(streamed.run.context.id, 12345678901234567890n);
  assert.equal(parseState(JSON.stringify(streamed)).run.usage.inputTokens, MAX);
  assert.ok(items.some((i) => i.type === 'result' && i.result.run.usage.inputTokens === MAX));
});

test('a state whose strings hold long digit runs but no big integer stringifies as an object', async () => {
  const result = await toolAgent(() => 'order 123456789012345678901234567890')
    .run({ input: 'id 98765432109876543210', client: oneCall(), context: { n: 9007199254740991 } });
  const copy = JSON.parse(JSON.stringify(result));
  assert.equal(typeof copy, 'object');
  assert.equal(copy.run.input, 'id 98765432109876543210');
  assert.equal(copy.run.context.n, 9007199254740991);
  assert.equal(toolResult(copy).result, 'order 123456789012345678901234567890');
});

test('finding 5: where Node has JSON.rawJSON, JSON.stringify(result) writes BigInts as exact integers', () => {
  // Node 20 has it behind a flag (21+ without): the same path either way.
  const outcome = inChild(`
    if (typeof JSON.rawJSON !== 'function') throw new Error('no JSON.rawJSON');
    const agent = sdk.createAgent({ id: 'a', tools: [sdk.defineTool({ id: 't', requireApproval: true, execute: (i) => i })] });
    const client = sdk.createScriptedClient([{ toolCalls: [{ id: 'c1', name: 't', arguments: '{"n":18446744073709551615}' }] }, { text: 'done' }]);
    const paused = await agent.run({ input: 'go', client, context: { big: 9007199254740993n } });
    const text = JSON.stringify(paused);
    const parsed = JSON.parse(text);
    const done = await agent.continueRun({ state: text, approvals: ['c1'], client });
    console.log(JSON.stringify({
      object: typeof parsed === 'object',
      digits: text.includes('"context":{"big":9007199254740993}') && text.includes('{"n":18446744073709551615}'),
      result: String(done.stepResults[0].toolResults[0].result.n),
    }));
  `, Number(process.versions.node.split('.')[0]) < 21 ? ['--harmony-json-parse-with-source'] : []);
  assert.deepEqual(outcome, { object: true, digits: true, result: '18446744073709551615' });
});

test('finding 5: a BigInt beyond 64 bits, a cycle or too deep a value is refused with its message', async () => {
  let deep = 1;
  for (let i = 0; i < 100; i++) deep = { a: deep };
  const cyclic = { name: 'loop' };
  cyclic.self = cyclic;
  const cases = [
    [{ n: 2n ** 64n }, 'integer 18446744073709551616 does not fit in 64 bits'],
    [{ n: -(2n ** 63n) - 1n }, 'integer -9223372036854775809 does not fit in 64 bits'],
    [cyclic, 'value contains a cycle'],
    [deep, 'value is nested more than 64 levels deep'],
    [{ get boom() { throw Object.create(null); } }, `value cannot be read: ${UNPRINTABLE}`],
    [{ toJSON() { throw new Error('no JSON'); } }, 'value cannot be read: no JSON'],
    [Object.assign([], { length: 2 ** 32 - 1 }), 'value cannot be read: an array of 4294967295 items is too large'],
    [new Proxy([], { get: (_t, k) => (k === 'length' ? 2 ** 32 - 1 : 1) }), 'value cannot be read: an array of 4294967295 items is too large'],
  ];
  for (const [value, message] of cases) {
    await assert.rejects(toolAgent(() => value).run({ input: 'go', client: oneCall() }), (error) => {
      assert.equal(error.code, 'tool_output_invalid');
      assert.equal(error.message, `Invalid tool output: ${message}`);
      return true;
    });
    await assert.rejects(toolAgent((_input, context) => { context.emitProgress(value); return 'ok'; }).run({ input: 'go', client: oneCall() }), (error) => {
      assert.equal(error.code, 'tool_event_invalid');
      assert.equal(error.message, `Invalid tool event: ${message}`);
      return true;
    });
    // The caller's own arguments: a host error at the call.
    await assert.rejects(createAgent({ id: 'a' }).run({ input: value, client: createScriptedClient([{ text: 'ok' }]) }), (error) => {
      assert.ok(error instanceof TypeError || error instanceof RangeError, error.constructor.name);
      assert.equal(error.message, `input: ${message}`);
      return true;
    });
  }
  // Definitions and supplied outputs: host errors naming the argument.
  let deepSchema = { type: 'object' };
  for (let i = 0; i < 70; i++) deepSchema = { type: 'object', properties: { a: deepSchema } };
  assert.throws(() => defineTool({ id: 't', parameters: deepSchema }), { name: 'RangeError', message: 'parameters: value is nested more than 64 levels deep' });
  const loop = { type: 'object' };
  loop.properties = { self: loop };
  assert.throws(() => defineTool({ id: 't', inputSchema: loop }), { name: 'TypeError', message: 'schema: value contains a cycle' });
  const gated = createAgent({ id: 'a', tools: [defineTool({ id: 't', execute: false })] });
  const paused = await gated.run({ input: 'go', client: oneCall() });
  assert.equal(paused.run.status, 'waiting_for_human');
  await assert.rejects(gated.continueRun({ state: paused, toolOutputs: [{ toolCallId: 'c1', output: cyclic }], client: oneCall() }), {
    name: 'TypeError', message: 'toolOutputs: output of tool call c1: value contains a cycle',
  });
  // 64 levels are fine.
  let ok = 1;
  for (let i = 0; i < 64; i++) ok = [ok];
  const result = await toolAgent(() => ok).run({ input: 'go', client: oneCall() });
  assert.deepEqual(toolResult(result).result, ok);
});

test('setContext refuses a value that cannot be stored with a host error in the tool', async () => {
  const cyclic = {};
  cyclic.self = cyclic;
  const thrown = [];
  const tool = defineTool({
    id: 't',
    execute: (_input, context) => {
      let deep = 1;
      for (let i = 0; i < 70; i++) deep = [deep];
      for (const value of [cyclic, { n: 2n ** 70n }, deep]) {
        try { context.setContext(value); } catch (error) { thrown.push([error.constructor.name, error.message]); }
      }
      context.setContext({ n: 2n ** 60n });
      return 'ok';
    },
  });
  const result = await createAgent({ id: 'a', tools: [tool] }).run({ input: 'go', client: oneCall() });
  assert.deepEqual(thrown, [
    ['TypeError', 'setContext: value contains a cycle'],
    ['RangeError', 'setContext: integer 1180591620717411303424 does not fit in 64 bits'],
    ['RangeError', 'setContext: value is nested more than 64 levels deep'],
  ]);
  assert.deepEqual(result.run.context, { n: 2n ** 60n });
});

test('finding 6: a deep, cyclic or unreadable state object is state_invalid', async () => {
  const agent = createAgent({ id: 'a' });
  const client = createScriptedClient([{ text: 'ok' }]);
  let deep = {};
  for (let i = 0; i < 10000; i++) deep = { run: deep };
  const cyclic = { version: 1 };
  cyclic.run = cyclic;
  const cases = [
    [deep, 'Invalid state: value is nested more than 64 levels deep'],
    [cyclic, 'Invalid state: value contains a cycle'],
    [new Proxy({}, { ownKeys() { throw new Error('no keys'); } }), 'Invalid state: value cannot be read: no keys'],
    [{ version: 1, n: 2n ** 80n }, 'Invalid state: integer 1208925819614629174706176 does not fit in 64 bits'],
  ];
  for (const [state, message] of cases) {
    await assert.rejects(agent.continueRun({ state, client }), (error) => {
      assert.ok(error instanceof AgentStateError, error.constructor.name);
      assert.equal(error.code, 'state_invalid');
      assert.equal(error.message, message);
      return true;
    });
  }
  await assert.rejects(agent.continueRun({ state: '['.repeat(100000), client }), (error) => error instanceof AgentStateError);
});

test('a paused state holding a call with 60-deep arguments continues from its parsed object, as from its text', async () => {
  // Within the 64-level limit of a value, but 6 levels further down in the state: the state
  // limit (64 + 8, as the core's reader) applies to the state object, counted from its root.
  let args = { leaf: true };
  for (let i = 0; i < 59; i++) args = { a: args };
  const deploy = defineTool({ id: 't', requireApproval: true, execute: async () => 'deployed' });
  const agent = createAgent({ id: 'a', tools: [deploy] });
  const paused = await agent.run({
    input: 'go', client: createScriptedClient([calls(call('c1', 't', args))]),
  });
  assert.equal(paused.run.status, 'waiting_for_human');
  const text = JSON.stringify(paused);
  for (const state of [parseState(text), text]) {
    const done = await agent.continueRun({ state, approvals: ['c1'], client: createScriptedClient([{ text: 'ok' }]) });
    assert.equal(done.run.status, 'completed');
    assert.equal(done.output, 'ok');
  }
});

test('a tool error keeps its message and an Error without message its name', async () => {
  class Quiet extends Error {}
  Quiet.prototype.name = 'QuietError';
  const result = await toolAgent(() => { throw new Quiet(); }, { onError: 'return-to-model' }).run({ input: 'go', client: oneCall() });
  assert.equal(toolResult(result).error, 'QuietError');
  await assert.rejects(toolAgent(() => { throw new Error('plain'); }).run({ input: 'go', client: oneCall() }), (error) => {
    assert.ok(error instanceof AgentToolError);
    assert.equal(error.message, 'plain');
    return true;
  });
});

test('a duration too long for a clock is no limit: the tool runs and the run completes', async () => {
  const tool = defineTool({ id: 't', timeoutMs: 1e300, execute: () => 1 });
  const agent = createAgent({ id: 'a', tools: [tool], modelRetry: { maxRetries: 1, backoffMs: 1e300 } });
  const result = await agent.run({ input: 'go', client: oneCall() });
  assert.equal(result.run.status, 'completed');
  assert.equal(result.output, 'done');
});

test('integers beyond 2^53 in definitions are read exactly (BigInt in a schema)', async () => {
  const big = 2n ** 53n + 1n;
  const tool = defineTool({
    id: 'exact',
    parameters: { type: 'object', properties: { n: { const: big } }, required: ['n'] },
    execute: ({ n }) => n,
  });
  // The schema comes back with its digits.
  assert.equal(tool.parameters.properties.n.const, big);
  const agent = createAgent({ id: 'a', tools: [tool], toolExecution: { onError: 'return-to-model' } });
  const client = createScriptedClient([
    calls({ id: 'c1', name: 'exact', arguments: `{"n":${big}}` }, { id: 'c2', name: 'exact', arguments: `{"n":${big - 1n}}` }),
    { text: 'done' },
  ]);
  const result = await agent.run({ input: 'go', client });
  const [ok, refused] = result.stepResults[0].toolResults;
  assert.equal(ok.result, big);
  assert.match(refused.error, /^Invalid tool input: /);
  // A validator's schema too.
  const validator = jsonSchemaValidator({ type: 'integer', maximum: 2n ** 53n });
  assert.equal(validator.safeParse(2n ** 53n).success, true);
  assert.equal(validator.safeParse(big).success, false);
});

