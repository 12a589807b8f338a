// Where does our Node fan-out time go? (ours only; the peers are in bench.mjs)
//
//   cd benchmarks/node && node --expose-gc investigate.mjs [section ...]
//
// Sections (default: all but `profile`):
//   scaling    fan-out µs/call at N = 100, 250, 500, 1000, 2000 (is the per-call cost flat?)
//   seqscaling sequential µs/turn at 25 … 800 turns (median and fastest run)
//   variants   fan-out N=1000 variants: no parameter schema, async execute, toolConcurrency 1,
//              and sequential-in-one-turn vs concurrent
//   threads    CPU time per thread (from /proc/self/task/*/schedstat, ns) over 40 fan-out runs:
//              the JS main thread vs the tokio workers vs V8/libuv helpers, per call
//   bridge     wraps the (private) dispatcher, `takeOutbox` and `completeMany` to count the
//              dispatcher calls, batches and answer batches per run and the JS time spent
//              inside them, per call
//   jsfloor    the JS work of one OP_EXECUTE entry of a batch (JSON.parse of the batch, the
//              context object, the tool, the answer text) in a plain loop
//   sleepy     the ms above 50 in the sleepy workload: to the first executor, dispatch spread,
//              timer lateness, last timer to resolved
//   result     size of the state JSON of a fan-out run, and what JSON.parse of it costs (the
//              run resolves with the state's head; its growing parts are parsed when read)
//   profile    40 fan-out runs (PROFILE_RUNS) and nothing else (for `node --cpu-prof` /
//              `perf record`)
//
// Timing: as bench.mjs (setup untimed, gc() before each run, 1 warm-up + RUNS runs, median).
// This file reads the binding's private `native.js` (by path) only to instrument it.
// Env: RUNS (5), PHASEO_SDK_DIR (a copy of bindings-node to measure instead).
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
// PHASEO_SDK_DIR: measure a (modified) copy of bindings-node instead (index.js + lib/ +
// native.js + phaseo-agent.node in that folder), e.g. to try a fix before changing the binding.
const pkgDir = process.env.PHASEO_SDK_DIR || dirname(require.resolve('@phaseo/agent-sdk'));
const SECTIONS = process.argv.slice(2).length ? new Set(process.argv.slice(2)) : new Set(['scaling', 'seqscaling', 'variants', 'threads', 'bridge', 'jsfloor', 'result', 'sleepy']);

// The bridge instrumentation must wrap registerHost before lib/bridge.js (loaded by index.js)
// registers its dispatcher. It counts the dispatcher calls (one per batch of queued calls),
// the batches taken with takeOutbox and their entries, and the completeMany calls (one per
// batch of answers).
const bridge = { dispatch: 0, dispatchNs: 0n, batches: 0, entries: 0, complete: 0, answers: 0, completeNs: 0n, on: false };
if (SECTIONS.has('bridge')) {
  const native = require(join(pkgDir, 'native.js'));
  const registerHost = native.registerHost;
  native.registerHost = (dispatch) => registerHost((op, callableId, requestId, payload) => {
    if (!bridge.on) return dispatch(op, callableId, requestId, payload);
    bridge.dispatch++;
    const t0 = process.hrtime.bigint();
    try {
      return dispatch(op, callableId, requestId, payload);
    } finally {
      bridge.dispatchNs += process.hrtime.bigint() - t0;
    }
  });
  const takeOutbox = native.takeOutbox;
  native.takeOutbox = () => {
    const text = takeOutbox();
    if (bridge.on) {
      bridge.batches++;
      bridge.entries += (text.match(/\[0,/g) || []).length;
    }
    return text;
  };
  const completeMany = native.completeMany;
  native.completeMany = (answers) => {
    if (!bridge.on) return completeMany(answers);
    bridge.complete++;
    bridge.answers += answers.split('\n').length - 1;
    const t0 = process.hrtime.bigint();
    try {
      return completeMany(answers);
    } finally {
      bridge.completeNs += process.hrtime.bigint() - t0;
    }
  };
}
const { createAgent, createScriptedClient, defineTool } = require(join(pkgDir, 'index.js'));
console.log(`sdk: ${pkgDir}`);

const RUNS = parseInt(process.env.RUNS || '5', 10);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const r2 = (x) => Math.round(x * 100) / 100;
const gc = () => globalThis.gc && globalThis.gc();

async function measure(setup, run, check, runs = RUNS, warmup = 1) {
  const samples = [];
  for (let i = 0; i < warmup + runs; i++) {
    const state = await setup();
    gc();
    const t0 = process.hrtime.bigint();
    const result = await run(state);
    const dt = Number(process.hrtime.bigint() - t0) / 1e6;
    await check(state, result);
    if (i >= warmup) samples.push(dt);
  }
  return { median_ms: Math.round(median(samples) * 1000) / 1000, min_ms: Math.round(Math.min(...samples) * 1000) / 1000 };
}

const counter = { n: 0 };
const ints = { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, required: ['a', 'b'] };
const TOOLS = {
  add: defineTool({ id: 'add', description: 'Add two integers.', parameters: ints, execute: ({ a, b }) => { counter.n++; return a + b; } }),
  add_noschema: defineTool({ id: 'add', description: 'Add two integers.', parameters: { type: 'object' }, execute: ({ a, b }) => { counter.n++; return a + b; } }),
  add_async: defineTool({ id: 'add', description: 'Add two integers.', parameters: ints, execute: async ({ a, b }) => { counter.n++; return a + b; } }),
};
const call = (id, args) => ({ id, name: 'add', arguments: JSON.stringify(args) });
const fanoutTurns = (n) => [{ toolCalls: Array.from({ length: n }, (_, i) => call(`c${i}`, { a: i, b: 1 })) }, { text: 'done' }];

function fanout(n, { tool = 'add', concurrency = 1000 } = {}) {
  return [
    () => {
      counter.n = 0;
      const agent = createAgent({ id: 'bench', instructions: 'bench', tools: [TOOLS[tool]], maxSteps: 5, toolExecution: { toolConcurrency: concurrency } });
      return { agent, client: createScriptedClient(fanoutTurns(n)) };
    },
    ({ agent, client }) => agent.run({ input: 'go', client }),
    (_s, result) => {
      if (result.output !== 'done' || counter.n !== n) throw new Error(`check failed: ${result.output} ${counter.n}`);
    },
  ];
}

const out = { load_before: loadavg().map(r2) };
const log = (...a) => console.log(...a);

if (SECTIONS.has('scaling')) {
  log('== scaling: fan-out µs/call (median of', RUNS, 'runs)');
  out.scaling = {};
  for (const n of [100, 250, 500, 1000, 2000]) {
    const r = await measure(...fanout(n));
    out.scaling[n] = { ...r, per_call_us: r2((r.median_ms * 1000) / n) };
    log(`  N=${String(n).padEnd(5)} ${out.scaling[n].per_call_us.toFixed(2).padStart(7)} µs/call  (median ${r.median_ms} ms, min ${r.min_ms} ms, load ${loadavg()[0].toFixed(2)})`);
  }
}

if (SECTIONS.has('seqscaling')) {
  log('== sequential scaling: µs per turn (median and fastest of', RUNS, 'runs)');
  out.seqscaling = {};
  for (const n of [25, 50, 100, 200, 400, 800]) {
    const r = await measure(
      () => {
        counter.n = 0;
        const agent = createAgent({ id: 'bench', instructions: 'bench', tools: [TOOLS.add], maxSteps: n + 5, toolExecution: { toolConcurrency: 1000 } });
        const turns = [...Array.from({ length: n }, (_, i) => ({ toolCalls: [call(`c${i}`, { a: i, b: 1 })] })), { text: 'done' }];
        return { agent, client: createScriptedClient(turns) };
      },
      ({ agent, client }) => agent.run({ input: 'go', client }),
      (_s, result) => {
        if (result.output !== 'done' || counter.n !== n) throw new Error('seq check failed');
      },
    );
    out.seqscaling[n] = { ...r, per_turn_us: r2((r.median_ms * 1000) / n), per_turn_min_us: r2((r.min_ms * 1000) / n) };
    log(`  N=${String(n).padEnd(4)} ${out.seqscaling[n].per_turn_us.toFixed(1).padStart(7)} µs/turn  (fastest ${out.seqscaling[n].per_turn_min_us.toFixed(1)}; load ${loadavg()[0].toFixed(2)})`);
  }
}

if (SECTIONS.has('variants')) {
  log('== variants at N=1000 (µs/call)');
  out.variants = {};
  const variants = {
    baseline: {},
    'no parameter schema': { tool: 'add_noschema' },
    'async execute': { tool: 'add_async' },
    'toolConcurrency 1 (one call at a time)': { concurrency: 1 },
    'toolConcurrency 2': { concurrency: 2 },
    'toolConcurrency 16': { concurrency: 16 },
  };
  for (const [name, opts] of Object.entries(variants)) {
    const r = await measure(...fanout(1000, opts));
    out.variants[name] = { ...r, per_call_us: r2(r.median_ms) };
    log(`  ${name.padEnd(40)} ${r2(r.median_ms).toFixed(2).padStart(7)} µs/call  (min ${r.min_ms} ms, load ${loadavg()[0].toFixed(2)})`);
  }
}

/** CPU ns per thread (name → ns), from schedstat (high resolution). */
function threadCpu() {
  const acc = {};
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const name = readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
      const ns = Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      const key = tid === String(process.pid) ? 'main (JS)' : name;
      acc[key] = acc[key] || {};
      acc[key][tid] = ns;
    } catch {
      // thread exited
    }
  }
  return acc;
}

if (SECTIONS.has('threads')) {
  const M = 40;
  const N = 1000;
  const [setup, run, check] = fanout(N);
  for (let i = 0; i < 3; i++) { const s = setup(); await check(s, await run(s)); } // warm the workers
  const states = Array.from({ length: M }, setup);
  gc();
  const before = threadCpu();
  const t0 = process.hrtime.bigint();
  for (const s of states) { counter.n = 0; await check(s, await run(s)); }
  const wallNs = Number(process.hrtime.bigint() - t0);
  const after = threadCpu();
  const calls = M * N;
  out.threads = { runs: M, n: N, wall_us_per_call: r2(wallNs / 1000 / calls), cpu_us_per_call: {} };
  log(`== threads: CPU per call over ${M} fan-out runs of ${N} (no gc between runs): wall ${out.threads.wall_us_per_call} µs/call`);
  for (const [name, tids] of Object.entries(after)) {
    let ns = 0;
    for (const [tid, v] of Object.entries(tids)) ns += v - (before[name]?.[tid] ?? 0);
    if (ns <= 0) continue;
    out.threads.cpu_us_per_call[`${name} ×${Object.keys(tids).length}`] = r2(ns / 1000 / calls);
  }
  for (const [k, v] of Object.entries(out.threads.cpu_us_per_call).sort((a, b) => b[1] - a[1])) log(`  ${k.padEnd(28)} ${v.toFixed(2).padStart(7)} µs CPU/call`);
}

if (SECTIONS.has('bridge')) {
  const N = 1000;
  const M = 20;
  const [setup, run, check] = fanout(N);
  for (let i = 0; i < 3; i++) { const s = setup(); await check(s, await run(s)); }
  const states = Array.from({ length: M }, setup);
  gc();
  bridge.on = true;
  const t0 = process.hrtime.bigint();
  for (const s of states) { counter.n = 0; await check(s, await run(s)); }
  const wallNs = Number(process.hrtime.bigint() - t0);
  bridge.on = false;
  const calls = N * M;
  out.bridge = {
    dispatcher_calls_per_run: r2(bridge.dispatch / M),
    batches_per_run: r2(bridge.batches / M),
    executes_per_run: r2(bridge.entries / M),
    complete_many_calls_per_run: r2(bridge.complete / M),
    answers_per_run: r2(bridge.answers / M),
    wall_us_per_call_instrumented: r2(wallNs / 1000 / calls),
    js_in_dispatch_us_per_call: r2(Number(bridge.dispatchNs) / 1000 / calls),
    native_complete_many_us_per_call: r2(Number(bridge.completeNs) / 1000 / calls),
  };
  log('== bridge (instrumented; hrtime adds ~0.1 µs per wrap):');
  for (const [k, v] of Object.entries(out.bridge)) log(`  ${k.padEnd(32)} ${JSON.stringify(v)}`);
}

if (SECTIONS.has('jsfloor')) {
  // What lib/bridge.js does for the OP_EXECUTE entries of one batch, without crossing to the
  // core: the batch text as the core sends it (one PHASE entry with the runtime data shared
  // by the calls of the tool phase, then `[0, callable, request, input, callId, toolName,
  // toolCallInput, attempt]`), and, for comparison, the earlier format (the whole runtime
  // data in every call).
  const N = 1000;
  const runId = '6f1c2f6e-2d5b-4a53-9a55-0e1c8b0d9b1e';
  const batch = `[[8,0,0,{"runId":"${runId}","agentId":"bench","stepIndex":0,"context":null}],` +
    Array.from({ length: N }, (_, i) => `[0,1,${i + 1},{"a":${i},"b":1},"c${i}","add",{"a":${i},"b":1},1]`).join(',') + ']';
  const oldBatch = '[' + Array.from({ length: N }, (_, i) => `[0,1,${i + 1},${JSON.stringify({
    input: { a: i, b: 1 },
    runtime: { runId, agentId: 'bench', stepIndex: 0, context: null, toolCall: { id: `c${i}`, name: 'add', input: { a: i, b: 1 } } },
  })}]`).join(',') + ']';
  const fn = ({ a, b }) => a + b;
  let sink = 0;
  const variants = {
    'JSON.parse(batch), earlier format': () => { sink ^= JSON.parse(oldBatch).length; },
    'JSON.parse(batch)': () => { sink ^= JSON.parse(batch).length; },
    'dispatch: parse, context, tool, answer text': () => {
      const entries = JSON.parse(batch);
      let phase = null;
      let answers = '';
      for (const e of entries) {
        if (e[0] === 8) { phase = e[3]; continue; }
        const context = { _requestId: e[2], _controller: null, _aborted: false, runId: phase.runId, agentId: phase.agentId, stepIndex: phase.stepIndex, context: phase.context, toolCall: { id: e[4], name: e[5], input: e[6] }, attempt: e[7], idempotencyKey: `${phase.runId}:${e[4]}` };
        answers += `${e[2]} 1${JSON.stringify(fn(e[3], context))}\n`;
      }
      sink ^= answers.length;
    },
  };
  out.jsfloor = {};
  log(`== JS floor of one dispatch (ns per call, median of 5 loops of 20 batches of ${N})`);
  for (const [name, f] of Object.entries(variants)) {
    const samples = [];
    for (let r = 0; r < 6; r++) {
      gc();
      const t0 = process.hrtime.bigint();
      for (let k = 0; k < 20; k++) f();
      const dt = Number(process.hrtime.bigint() - t0) / (20 * N);
      if (r) samples.push(dt);
    }
    out.jsfloor[name] = Math.round(median(samples));
    log(`  ${name.padEnd(44)} ${String(out.jsfloor[name]).padStart(6)} ns`);
  }
  if (sink === 0.5) log(sink);
}

if (SECTIONS.has('sleepy')) {
  // Where the ms above 50 go: run start → first executor entered; first → last executor
  // entered (the dispatch of 100 calls); the 50 ms timers; last timer fired → run resolved.
  const N = 100;
  const marks = { enter: [], exit: [] };
  const now = () => Number(process.hrtime.bigint()) / 1e6;
  const nap = defineTool({
    id: 'nap', description: 'Sleep 50 ms, return i.', parameters: { type: 'object', properties: { i: { type: 'integer' } }, required: ['i'] },
    execute: async ({ i }) => { marks.enter.push(now()); await new Promise((r) => setTimeout(r, 50)); marks.exit.push(now()); return i; },
  });
  const rows = [];
  for (let r = 0; r < RUNS + 1; r++) {
    const agent = createAgent({ id: 'bench', instructions: 'bench', tools: [nap], maxSteps: 5, toolExecution: { toolConcurrency: 1000 } });
    const client = createScriptedClient([{ toolCalls: Array.from({ length: N }, (_, i) => ({ id: `c${i}`, name: 'nap', arguments: JSON.stringify({ i }) })) }, { text: 'done' }]);
    marks.enter = [];
    marks.exit = [];
    gc();
    const t0 = now();
    const result = await agent.run({ input: 'go', client });
    const t1 = now();
    if (result.output !== 'done' || marks.exit.length !== N) throw new Error('sleepy check failed');
    const first = Math.min(...marks.enter);
    const last = Math.max(...marks.enter);
    const lastExit = Math.max(...marks.exit);
    if (r) rows.push({
      wall_ms: t1 - t0,
      to_first_execute_ms: first - t0,
      dispatch_spread_ms: last - first,
      timer_ms_of_last: lastExit - last,
      last_timer_to_resolved_ms: t1 - lastExit,
    });
  }
  out.sleepy = {};
  for (const k of Object.keys(rows[0])) out.sleepy[k] = Math.round(median(rows.map((x) => x[k])) * 1000) / 1000;
  log(`== sleepy ${N} × 50 ms: medians of ${RUNS} runs (ms)`);
  for (const [k, v] of Object.entries(out.sleepy)) log(`  ${k.padEnd(28)} ${v.toFixed(3).padStart(8)}`);
}

if (SECTIONS.has('result')) {
  // The whole state as JSON text: how big is it, and what would parsing it cost (per tool
  // call)? A run resolves with the state's small head only; `run.messages`, `steps`,
  // `stepResults` and `items` are serialized and parsed when first read.
  const [setup, run] = fanout(1000);
  const s = setup();
  counter.n = 0;
  const result = await run(s);
  const text = JSON.stringify(result);
  const samples = [];
  for (let r = 0; r < 11; r++) {
    gc();
    const t0 = process.hrtime.bigint();
    JSON.parse(text);
    if (r) samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  out.result = {
    state_json_bytes: text.length,
    messages: result.run.messages.length,
    step_tool_calls: result.stepResults.reduce((a, st) => a + st.toolCalls.length, 0),
    step_tool_results: result.stepResults.reduce((a, st) => a + st.toolResults.length, 0),
    items: result.items.length,
    json_parse_ms: Math.round(median(samples) * 1000) / 1000,
    json_parse_us_per_call: r2((median(samples) * 1000) / 1000),
  };
  log('== result state of a fan-out run of 1000 (its JSON text; the parts are parsed when read)');
  for (const [k, v] of Object.entries(out.result)) log(`  ${k.padEnd(24)} ${v}`);
}

if (SECTIONS.has('profile')) {
  const [setup, run, check] = fanout(1000);
  const states = Array.from({ length: Number(process.env.PROFILE_RUNS || 40) }, setup);
  const t0 = Date.now();
  for (const s of states) { counter.n = 0; await check(s, await run(s)); }
  log(`profile: 40 fan-out runs of 1000 in ${Date.now() - t0} ms`);
}

out.load_after = loadavg().map(r2);
log('JSON:', JSON.stringify(out));
