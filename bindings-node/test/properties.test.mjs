// Property tests (fast-check) of the Node boundary: generated host values —
// deep, cyclic, BigInt, odd objects — through tools, validators, hooks, clients and
// listeners, odd thrown values and thenables, and generated or mutated states through
// continueRun. Every run must settle with a value or an SDK error of the right code:
// never a crash, a hang, or an exception of another kind.
//
// `PHASEO_FUZZ_RUNS` (a number) sets the runs per property (default 800: a few thousand
// inputs in all; `make fuzz-node` uses many more), `PHASEO_FUZZ_SEED` the seed.


import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  AgentError, AgentStateError, createAgent, createScriptedClient, defineTool,
} from '../index.mjs';
import { call, calls } from './helpers.mjs';

const RUNS = Number(process.env.PHASEO_FUZZ_RUNS) > 0 ? Number(process.env.PHASEO_FUZZ_RUNS) : 800;
const SEED = process.env.PHASEO_FUZZ_SEED === undefined ? undefined : Number(process.env.PHASEO_FUZZ_SEED);
const settings = (factor = 1) => ({ numRuns: Math.max(1, Math.round(RUNS * factor)), seed: SEED, endOnFailure: true });

const MIN_I64 = -(2n ** 63n);
const MAX_U64 = 2n ** 64n - 1n;
const UNPRINTABLE = 'a value that cannot be converted to text was thrown';
const VALUE_MESSAGES = [
  /value is nested more than 64 levels deep$/,
  /value contains a cycle$/,
  /integer -?\d+ does not fit in 64 bits$/,
  /value cannot be read: /,
];

// ---------------------------------------------------------------------------------------
// Generated values

/** Storable values: what must come back exactly (after `expected`). */
const { storable } = fc.letrec((tie) => ({
  storable: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.double(),
    fc.integer(),
    fc.bigInt({ min: MIN_I64, max: MAX_U64 }),
    fc.constantFrom(2 ** 53, -(2 ** 53), 2 ** 60, 1e20, -1e300, Number.MAX_SAFE_INTEGER, 9007199254740993n),
    fc.string({ unit: 'binary' }),
    fc.constantFrom('\ud800', 'a\udc00b', '\ud83d\ude00\ud83d', '\\ud800'),
    fc.array(tie('storable'), { maxLength: 4 }),
    fc.dictionary(fc.string({ unit: 'binary', maxLength: 6 }), tie('storable'), { maxKeys: 4 }),
  ),
}));

/** A value nested `levels` deep around `inner`. */
const nest = (inner, levels, asArray) => {
  let value = inner;
  for (let i = 0; i < levels; i++) value = asArray ? [value] : { k: value };
  return value;
};

/** Values that cannot be stored, each with the message it must be refused with. Nesting
 * starts at `minLevels`: a value's limit is 64 levels, a state's 64 + 8 counted from its
 * root (and 4 more for each paused agent tool's state around it, at most 8), so a value
 * placed in a state needs more than 104 levels of its own to be refused wherever it is
 * placed. */
const unstorableFrom = (minLevels) => fc.oneof(
  fc.tuple(storable, fc.integer({ min: minLevels, max: 3000 }), fc.boolean())
    .map(([inner, levels, asArray]) => [nest(inner, levels, asArray), VALUE_MESSAGES[0]]),
  fc.tuple(storable, fc.integer({ min: 0, max: 5 })).map(([inner, levels]) => {
    const loop = { inner };
    loop.self = nest(loop, levels, false);
    return [{ wrap: loop }, VALUE_MESSAGES[1]];
  }),
  fc.oneof(fc.bigInt({ min: MAX_U64 + 1n, max: 2n ** 200n }), fc.bigInt({ min: -(2n ** 200n), max: MIN_I64 - 1n }))
    .map((n) => [{ n }, VALUE_MESSAGES[2]]),
  fc.constantFrom('getter', 'proxy', 'toJSON').map((kind) => {
    if (kind === 'getter') return [{ get x() { throw Object.create(null); } }, VALUE_MESSAGES[3]];
    if (kind === 'proxy') return [new Proxy({}, { ownKeys() { throw new Error('no keys'); } }), VALUE_MESSAGES[3]];
    return [{ toJSON() { throw new Error('no JSON'); } }, VALUE_MESSAGES[3]];
  }),
);
const unstorable = unstorableFrom(65);
const unstorableInState = unstorableFrom(105);

/** What a storable value reads back as: an integral number beyond 2^53 as the BigInt of
 * the digits JavaScript writes for it (`String(2 ** 60)` is `1152921504606847000`) when
 * they fit 64 bits, non-finite numbers as null, -0 as 0, undefined members dropped (JSON
 * rules). */
function expected(value) {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return null;
    if (Object.is(value, -0)) return 0;
    const text = String(value);
    if (!Number.isSafeInteger(value) && /^-?\d+$/.test(text)) {
      const big = BigInt(text);
      if (big >= MIN_I64 && big <= MAX_U64) return big;
    }
    return value;
  }
  if (typeof value === 'string') return value.toWellFormed();
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) && BigInt(Number(value)) === value ? Number(value) : value;
  if (Array.isArray(value)) return value.map(expected);
  if (value !== null && typeof value === 'object') {
    const out = {};
    for (const [k, v] of Object.entries(value)) {
      if (v !== undefined) Object.defineProperty(out, k.toWellFormed(), { value: expected(v), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return value;
}

/** Thrown or rejected values of any kind. */
const thrown = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.anything({ maxDepth: 2, withBigInt: true, withNullPrototype: true, withObjectString: true, withBoxedValues: true }),
  fc.constantFrom(
    Object.create(null),
    { toString() { throw new Error('no text'); } },
    new Proxy({}, { get() { throw new Error('trap'); } }),
    Symbol('sym'),
    undefined,
    10n ** 30n,
  ),
  fc.string().map((m) => {
    const error = new Error(m);
    Object.defineProperty(error, 'message', { get() { throw new Error('no message'); } });
    return error;
  }),
  fc.string({ unit: 'binary' }).map((m) => new TypeError(m)),
);

/** How a callable delivers `value` as a failure. */
const deliveries = ['throw', 'reject', 'thenable-throws', 'thenable-rejects', 'then-getter-throws'];
function deliver(how, value) {
  switch (how) {
    case 'throw': throw value;
    case 'reject': return Promise.reject(value);
    case 'thenable-throws': return { then() { throw value; } };
    case 'thenable-rejects': return { then(_ok, fail) { fail(value); } };
    default: return { get then() { throw value; } };
  }
}

const oneCall = () => createScriptedClient([calls(call('c1', 't', { a: 1 })), { text: 'done' }]);

function assertSdkError(error, context) {
  assert.ok(error instanceof AgentError, `${context}: not an AgentError: ${error && error.stack}`);
  assert.equal(typeof error.message, 'string');
  assert.equal(typeof error.code, 'string');
}

// ---------------------------------------------------------------------------------------
// Properties

test('storable values returned by tools, hooks and validators come back exactly', async () => {
  const places = ['result', 'async-result', 'thenable', 'generator-return', 'onToolCalled', 'validator', 'progress', 'setContext'];
  await fc.assert(fc.asyncProperty(storable, fc.constantFrom(...places), async (value, place) => {
    const want = expected(value);
    const tool = {
      id: 't',
      execute: (_input, context) => {
        if (place === 'async-result') return Promise.resolve(value);
        if (place === 'thenable') return { then(ok) { ok(value); } };
        if (place === 'progress') { context.emitProgress(value); return 'ok'; }
        if (place === 'setContext') { context.setContext(value); return 'ok'; }
        return value;
      },
    };
    if (place === 'generator-return') tool.execute = function* gen() { yield value; return value; };
    // null from onToolCalled pauses the call (hitl): the hook answers 'null' instead.
    if (place === 'onToolCalled') tool.onToolCalled = () => (want === null ? 'null' : value);
    if (place === 'validator') tool.outputSchema = () => value;
    const result = await createAgent({ id: 'a', tools: [defineTool(tool)] }).run({ input: 'go', client: oneCall() });
    const toolResult = result.stepResults[0].toolResults[0];
    if (place === 'progress') assert.deepStrictEqual(toolResult.preliminaryResults, [want]);
    else if (place === 'setContext') assert.deepStrictEqual(result.run.context, want);
    else if (place === 'generator-return') {
      assert.deepStrictEqual(toolResult.preliminaryResults, [want]);
      assert.deepStrictEqual(toolResult.result, want);
    } else if (place === 'onToolCalled' && want === null) assert.equal(toolResult.result, 'null');
    else assert.deepStrictEqual(toolResult.result, want);
  }), settings(1));
});

test('unstorable values are refused with their message wherever they enter', async () => {
  const places = ['result', 'async-result', 'progress', 'setContext', 'onToolCalled', 'validator', 'client', 'input', 'context'];
  await fc.assert(fc.asyncProperty(unstorable, fc.constantFrom(...places), async ([value, message], place) => {
    const tool = {
      id: 't',
      execute: (_input, context) => {
        if (place === 'async-result') return Promise.resolve(value);
        if (place === 'progress') { context.emitProgress(value); return 'ok'; }
        if (place === 'setContext') { context.setContext(value); return 'ok'; }
        return value;
      },
    };
    if (place === 'onToolCalled') tool.onToolCalled = () => value;
    if (place === 'validator') tool.outputSchema = () => value;
    const agent = createAgent({ id: 'a', tools: [defineTool(tool)] });
    const options = { input: 'go', client: oneCall() };
    if (place === 'client') options.client = { generate: () => ({ message: { content: '', toolCalls: [] }, usage: {}, finishReason: 'stop', extra: value }) };
    if (place === 'input') options.input = value;
    if (place === 'context') options.context = value;
    try {
      await agent.run(options);
    } catch (error) {
      if (place === 'input' || place === 'context') {
        assert.ok(error instanceof TypeError || error instanceof RangeError, String(error));
      } else {
        assertSdkError(error, place);
        // A hook's answer is the call's result: refused, it is an invalid output as an
        // executor's is.
        const code = { progress: 'tool_event_invalid', setContext: 'tool_failed', client: 'model_failed' }[place] ?? 'tool_output_invalid';
        assert.equal(error.code, code, `${place}: ${error.message}`);
      }
      assert.match(error.message, message);
      return;
    }
    assert.fail(`${place}: accepted`);
  }), settings(0.75));
});

test('any thrown value, rejection or odd thenable becomes an error with a message', async () => {
  const places = ['execute', 'inputSchema', 'safeParse', 'parse', 'onToolCalled', 'requireApproval', 'nextTurnParams', 'client', 'stopWhen', 'onEvent',
    'instructions', 'agentRequireApproval', 'humanReview'];
  await fc.assert(fc.asyncProperty(thrown, fc.constantFrom(...deliveries), fc.constantFrom(...places), async (value, how, place) => {
    const tool = { id: 't', execute: () => 'ok', onError: 'return-to-model' };
    const sync = how === 'throw' ? how : 'throw';
    if (place === 'execute') tool.execute = () => deliver(how, value);
    if (place === 'inputSchema') tool.inputSchema = () => deliver(how, value);
    if (place === 'safeParse') tool.inputSchema = { safeParse: () => deliver(sync, value) };
    if (place === 'parse') tool.inputSchema = { parse: () => deliver(sync, value) };
    if (place === 'onToolCalled') tool.onToolCalled = () => deliver(how, value);
    if (place === 'requireApproval') tool.requireApproval = () => deliver(how, value);
    if (place === 'nextTurnParams') tool.nextTurnParams = () => deliver(how, value);
    const definition = { id: 'a', tools: [defineTool(tool)] };
    if (place === 'instructions') definition.instructions = () => deliver(how, value);
    if (place === 'agentRequireApproval') definition.requireApproval = () => deliver(how, value);
    if (place === 'humanReview') definition.humanReview = () => deliver(how, value);
    const agent = createAgent(definition);
    const options = { input: 'go', client: oneCall() };
    if (place === 'client') options.client = { generate: () => deliver(how, value) };
    if (place === 'stopWhen') options.stopWhen = () => deliver(how, value);
    if (place === 'onEvent') options.onEvent = () => deliver(how, value);
    let message;
    const emitWarning = process.emitWarning;
    const warnings = [];
    process.emitWarning = (warning) => warnings.push(warning);
    try {
      const result = await agent.run(options);
      if (place === 'onEvent') await new Promise((resolve) => setImmediate(resolve));
      if (place === 'onEvent') assert.ok(warnings.every((w) => typeof w === 'string' && w.startsWith('onEvent listener threw: ')));
      if (place === 'onEvent') return; // listeners only warn
      message = place === 'humanReview' ? result.run.error?.message : result.stepResults[0].toolResults[0].error;
    } catch (error) {
      assertSdkError(error, `${place}/${how}`);
      message = error.message;
    } finally {
      process.emitWarning = emitWarning;
    }
    assert.equal(typeof message, 'string', `${place}/${how}: no error`);
    assert.equal(message, message.toWellFormed());
  }), settings(1.5));
});

test('never-settling thenables are bounded by timeoutMs', async () => {
  await fc.assert(fc.asyncProperty(fc.constantFrom('then-noop', 'pending', 'self'), async (kind) => {
    const value = kind === 'then-noop' ? { then() {} } : kind === 'pending' ? new Promise(() => {}) : null;
    const execute = kind === 'self' ? () => { const t = { then(ok) { ok(t); } }; return t; } : () => value;
    const agent = createAgent({ id: 'a', tools: [defineTool({ id: 't', timeoutMs: 20, execute })] });
    try {
      await agent.run({ input: 'go', client: oneCall() });
      assert.equal(kind, 'self');
    } catch (error) {
      assertSdkError(error, kind);
      assert.equal(error.code, 'tool_timeout');
    }
  }), settings(0.05));
});

// A paused state to mutate: one approval-gated call pending.
async function pausedState() {
  const agent = createAgent({ id: 'a', tools: [defineTool({ id: 't', requireApproval: true, execute: (input) => input })] });
  const paused = await agent.run({ input: 'go', client: oneCall(), context: { n: 1 } });
  assert.equal(paused.run.status, 'waiting_for_human');
  return { agent, paused: JSON.parse(JSON.stringify(paused)) };
}

/** Every path to a member of `value` (objects and arrays). */
function paths(value, prefix = [], out = []) {
  out.push(prefix);
  if (value !== null && typeof value === 'object') {
    for (const key of Object.keys(value)) paths(value[key], [...prefix, key], out);
  }
  return out;
}

function replaced(root, path, replacement) {
  if (path.length === 0) return replacement;
  const copy = structuredClone(root);
  let at = copy;
  for (const key of path.slice(0, -1)) at = at[key];
  at[path[path.length - 1]] = replacement;
  return copy;
}

const ALLOWED_STATE_CODES = new Set(['state_invalid', 'continue_invalid']);

test('generated and mutated states through continueRun: a result or state_invalid/continue_invalid', async () => {
  const { agent, paused } = await pausedState();
  const all = paths(paused);
  const mutation = fc.oneof(
    fc.tuple(fc.nat(all.length - 1), storable).map(([i, v]) => ({ kind: 'value', state: replaced(paused, all[i], v) })),
    fc.tuple(fc.nat(all.length - 1), unstorableInState).map(([i, [v]]) => ({ kind: 'unstorable', state: replaced(paused, all[i], v) })),
    fc.tuple(fc.nat(all.length - 1), fc.constantFrom(2 ** 53, 2n ** 64n - 1n, -1, 1e300, '', 'x'.repeat(5), [], {})).map(([i, v]) => ({ kind: 'value', state: replaced(paused, all[i], v) })),
    fc.tuple(fc.nat(), fc.nat(), fc.string({ unit: 'binary', maxLength: 8 })).map(([at, drop, insert]) => {
      const text = JSON.stringify(paused);
      const from = at % (text.length + 1);
      return { kind: 'text', state: text.slice(0, from) + insert + text.slice(from + (drop % 4)) };
    }),
    storable.map((v) => ({ kind: 'value', state: v === null || typeof v !== 'object' ? { version: 1, run: v } : v })),
  );
  await fc.assert(fc.asyncProperty(mutation, fc.boolean(), async ({ kind, state }, approve) => {
    try {
      await agent.continueRun({ state, approvals: approve ? ['c1'] : undefined, client: oneCall() });
    } catch (error) {
      if (state === null) {
        assert.ok(error instanceof TypeError);
        return;
      }
      assertSdkError(error, kind);
      if (kind === 'unstorable') {
        assert.ok(error instanceof AgentStateError, error.message);
        return;
      }
      if (!ALLOWED_STATE_CODES.has(error.code)) {
        // A valid state whose run then fails (e.g. an edited tool call) is a run error.
        assert.ok(error.result !== undefined, `${error.code}: ${error.message}`);
      }
    }
  }), settings(1));
});
