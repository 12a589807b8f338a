// MCP servers (docs/behaviour.md §11) through the Node binding, against real servers started here: our
// test server on the official Python `mcp` package (tests/mcp/test_server.py) and
// `@modelcontextprotocol/server-everything` over stdio and Streamable HTTP (installed by
// `make mcp-servers`). A missing server fails the test under CI=true.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import {
  AgentDefinitionError, AgentMcpError, AgentSchemaValidationError, createAgent, createMcpServer, createScriptedClient,
} from '../index.mjs';
import { RecordingClient, call, calls, sleep } from './helpers.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SERVER = path.join(ROOT, 'tests/mcp/test_server.py');
const EVERYTHING = path.join(ROOT, 'tests/mcp/node_modules/.bin/mcp-server-everything');
const CI = !['', '0', 'false'].includes(process.env.CI ?? '');

/** Whether a server is installed; in CI a missing one fails the test. */
function installed(t, what, ok) {
  if (ok) return true;
  const message = `${what} is not installed: run \`make mcp-servers\``;
  if (CI) assert.fail(message);
  t.skip(message);
  return false;
}

const PYTHON = path.join(ROOT, '.venvs/py/bin/python');
const havePython = (t) => installed(t, 'the Python `mcp` package (.venvs/py)',
  fs.existsSync(PYTHON) && fs.existsSync(path.join(ROOT, '.venvs/py/.mcp')));
const haveEverything = (t) => installed(t, '@modelcontextprotocol/server-everything (tests/mcp/node_modules)',
  fs.existsSync(EVERYTHING));

const made = [];
after(() => { for (const dir of made) fs.rmSync(dir, { recursive: true, force: true }); });

function markers() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'phaseo-mcp-node-'));
  made.push(dir);
  return dir;
}

function testServer(name, dir, options = {}) {
  return createMcpServer({ name, command: PYTHON, args: [SERVER], env: { PHASEO_MCP_MARKERS: dir, PHASEO_MCP_NAME: name } },
    options);
}

const serverPids = (dir) => fs.readdirSync(dir).filter((f) => f.startsWith('pid-')).map((f) => Number(f.slice(4)));

function alive(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !stat.slice(stat.lastIndexOf(')') + 1).trim().startsWith('Z');
  } catch {
    return false;
  }
}

async function waitUntil(check, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await sleep(20);
  }
  return check();
}

/** Disposes `agent` when test `t` ends, through `Symbol.asyncDispose` (what `await using`
 * calls; Node 20 has no `using` syntax yet). */
function disposeAfter(t, agent) {
  t.after(() => agent[Symbol.asyncDispose]());
  return agent;
}

const toolResults = (result) => result.stepResults.flatMap((s) => s.toolResults);
const offered = (client) => client.requests[0].tools.map((t) => t.id).sort();
const text = (t) => ({ text: t });

test('tools are listed, filtered and prefixed', async (t) => {
  if (!havePython(t)) return;
  const dir = markers();
  const seen = [];
  const files = testServer('files', dir, {
    toolPrefix: 'fs',
    denyTools: ['crash', 'noisy'],
    filter: (tool) => { seen.push(tool); return tool.annotations.readOnlyHint === true || tool.name === 'delete_file'; },
  });
  const agent = createAgent({ id: 'lister', mcpServers: [files] });
  const client = new RecordingClient([text('ok')]);
  assert.equal((await agent.run({ input: 'hi', client })).run.status, 'completed');
  await agent.close();
  assert.deepEqual(offered(client), ['fs_add', 'fs_count_up', 'fs_delete_file', 'fs_echo', 'fs_fail', 'fs_slow']);
  const echo = seen.find((s) => s.name === 'echo');
  assert.deepEqual(echo, { name: 'echo', description: 'Returns its input text.', annotations: { readOnlyHint: true } });
  assert.ok(!seen.some((s) => s.name === 'crash'), 'denyTools applies before the filter');

  const only = createAgent({ id: 'lister', mcpServers: [testServer('only', dir, { allowTools: ['echo', 'add'] })] });
  const c2 = new RecordingClient([text('ok')]);
  await only.run({ input: 'hi', client: c2 });
  await only.close();
  assert.deepEqual(offered(c2), ['add', 'echo']);
});

test('an async filter works; a throwing one fails the run with mcp_failed', async (t) => {
  if (!havePython(t)) return;
  const dir = markers();
  const agent = createAgent({ id: 'a', mcpServers: [testServer('t', dir, { filter: async (tool) => tool.name === 'echo' })] });
  const client = new RecordingClient([text('ok')]);
  await agent.run({ input: 'hi', client });
  await agent.close();
  assert.deepEqual(offered(client), ['echo']);

  const broken = createAgent({ id: 'b', mcpServers: [testServer('t', dir, { optional: true, filter: () => { throw new Error('filter bug'); } })] });
  await assert.rejects(broken.run({ input: 'hi', client: createScriptedClient([text('ok')]) }), (e) =>
    e instanceof AgentMcpError && e.code === 'mcp_failed' && e.message.startsWith("MCP server 't': the tool filter failed on ")
    && e.message.includes('filter bug'));
  await broken.close();
});

test('a call round trip maps text, structured and error results', async (t) => {
  if (!havePython(t)) return;
  const agent = createAgent({ id: 'caller', mcpServers: [testServer('t', markers(), { onError: 'return-to-model' })] });
  const result = await agent.run({
    input: 'go',
    client: createScriptedClient([calls(call('c1', 'echo', { text: 'hello' }), call('c2', 'add', { numbers: [1, 2, 3] }),
      call('c3', 'fail', { reason: 'nope' })), text('done')]),
  });
  await agent.close();
  assert.equal(result.run.status, 'completed');
  const [r1, r2, r3] = toolResults(result);
  assert.equal(r1.result, 'hello');
  assert.deepEqual(r2.result, { total: 6, count: 3 });
  assert.equal(r3.result, undefined);
  assert.equal(r3.error, 'Error executing tool fail: failed: nope');
});

test('the input schema is checked by the core before the server is called', async (t) => {
  if (!havePython(t)) return;
  const agent = disposeAfter(t, createAgent({ id: 'v', mcpServers: [testServer('t', markers())] }));
  await assert.rejects(agent.run({ input: 'go', client: createScriptedClient([calls(call('c1', 'add', { numbers: 'x' })), text('x')]) }),
    (e) => e instanceof AgentSchemaValidationError && e.message.startsWith('Invalid tool input: /numbers'));
});

async function everythingRoundTrip(server) {
  const agent = createAgent({ id: 'everything', mcpServers: [server] });
  const client = new RecordingClient([calls(call('c1', 'ev_echo', { message: 'hi' }), call('c2', 'ev_get-sum', { a: 2, b: 3 })),
    text('done')]);
  const result = await agent.run({ input: 'go', client });
  await agent.close();
  assert.equal(result.run.status, 'completed');
  assert.ok(offered(client).includes('ev_echo'));
  const [r1, r2] = toolResults(result);
  assert.equal(r1.result, 'Echo: hi');
  assert.equal(r2.result, 'The sum of 2 and 3 is 5.');
}

test('server-everything over stdio', async (t) => {
  if (!haveEverything(t)) return;
  await everythingRoundTrip(createMcpServer({ name: 'everything', command: EVERYTHING, args: ['stdio'] }, { toolPrefix: 'ev' }));
});

async function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
    s.on('error', reject);
  });
}

test('server-everything over Streamable HTTP', async (t) => {
  if (!haveEverything(t)) return;
  const port = await freePort();
  const child = spawn(EVERYTHING, ['streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  try {
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('server-everything did not start listening')), 30_000);
      let seen = '';
      child.stderr.on('data', (chunk) => {
        seen += chunk;
        if (seen.includes('listening on port')) { clearTimeout(timer); resolve(); }
      });
      child.on('exit', () => { clearTimeout(timer); reject(new Error(`server-everything exited: ${seen}`)); });
    });
    await everythingRoundTrip(createMcpServer({ name: 'everything', url: `http://127.0.0.1:${port}/mcp`, headers: { 'X-Test': '1' },
      bearerToken: 'not-checked' }, { toolPrefix: 'ev' }));
  } finally {
    child.kill('SIGKILL');
  }
});

test('"destructive" approval pauses; the continue (from JSON, another agent) calls the server', async (t) => {
  if (!havePython(t)) return;
  const dir = markers();
  const client = createScriptedClient([calls(call('c1', 'echo', { text: 'free' }), call('c2', 'delete_file', { path: 'a.txt' })),
    text('deleted')]);
  const first = createAgent({ id: 'gate', mcpServers: [testServer('files', dir, { requireApproval: 'destructive' })] });
  const paused = await first.run({ input: 'go', client });
  await first.close();
  assert.equal(paused.run.status, 'waiting_for_human');
  assert.deepEqual(paused.run.pause.pendingToolCalls.map((p) => p.call.id), ['c2']);
  assert.ok(!fs.existsSync(path.join(dir, 'deleted-a.txt')));
  const stored = JSON.stringify(paused);
  const second = createAgent({ id: 'gate', mcpServers: [testServer('files', dir, { requireApproval: 'destructive' })] });
  const done = await second.continueRun({ state: stored, client, approvals: ['c2'] });
  await second.close();
  assert.equal(done.run.status, 'completed');
  assert.equal(done.output, 'deleted');
  assert.deepEqual(fs.readFileSync(path.join(dir, 'deleted-a.txt'), 'utf8').split('\n').filter(Boolean), [String(process.pid)]);
  assert.equal(toolResults(done).find((r) => r.toolCallId === 'c2').result, 'deleted a.txt');
});

test('an approval predicate sees the call and the annotations', async (t) => {
  if (!havePython(t)) return;
  const seen = [];
  const gate = (c, context) => { seen.push([c.name, c.input, context.toolAnnotations]); return context.toolAnnotations.readOnlyHint !== true; };
  const agent = disposeAfter(t, createAgent({ id: 'gate', mcpServers: [testServer('t', markers(), { requireApproval: gate })] }));
  const paused = await agent.run({ input: 'go', client: createScriptedClient([
    calls(call('c1', 'echo', { text: 'free' }), call('c2', 'append_note', { note: 'gated' })), text('x')]) });
  assert.deepEqual(paused.run.pause.pendingToolCalls.map((p) => p.call.id), ['c2']);
  assert.deepEqual(seen[0], ['echo', { text: 'free' }, { readOnlyHint: true }]);
  assert.deepEqual(seen[1][2], { readOnlyHint: false, destructiveHint: false });
});

test('a timeout returns on time and the server sees notifications/cancelled', async (t) => {
  if (!havePython(t)) return;
  const dir = markers();
  // The deadline is 1.5 s away so that the server has begun the call (a loaded machine may
  // take several hundred ms to hand it over) before the cancellation reaches it.
  const agent = disposeAfter(t, createAgent({ id: 'slow', mcpServers: [testServer('t', dir, { timeoutMs: 60_000, toolTimeouts: { slow: 1500 },
    onError: 'return-to-model' })] }));
  await agent.run({ input: 'warm', client: createScriptedClient([text('ok')]) });
  const started = Date.now();
  const result = await agent.run({ input: 'go', client: createScriptedClient([calls(call('c1', 'slow', { seconds: 20, tag: 'n1' })), text('ok')]) });
  const elapsed = Date.now() - started;
  assert.ok(elapsed < 3000, `took ${elapsed} ms`);
  assert.equal(toolResults(result)[0].error, 'Tool slow timed out after 1500ms');
  assert.ok(await waitUntil(() => fs.existsSync(path.join(dir, 'cancelled-n1')), 10_000), 'no notifications/cancelled');
  assert.ok(!fs.existsSync(path.join(dir, 'finished-n1')));
});

for (const policy of ['fail-run', 'return-to-model']) {
  test(`a crashed server is mcp_failed under onError ${policy}`, async (t) => {
    if (!havePython(t)) return;
    const agent = disposeAfter(t, createAgent({ id: 'crash', mcpServers: [testServer('t', markers(), { onError: policy })] }));
    const client = createScriptedClient([calls(call('c1', 'crash'), call('c2', 'echo', { text: 'after' })), text('ok')]);
    if (policy === 'fail-run') {
      await assert.rejects(agent.run({ input: 'go', client }), (e) => e instanceof AgentMcpError && e.code === 'mcp_failed'
        && e.message.startsWith("MCP server 't' exited") && e.message.includes('crashing on purpose')
        && e.result.run.status === 'failed');
    } else {
      const result = await agent.run({ input: 'go', client });
      assert.equal(result.run.status, 'completed');
      const [crashed, after] = toolResults(result);
      assert.ok(crashed.error.startsWith("MCP server 't' exited"), crashed.error);
      assert.equal(after.result, 'after'); // started again for the next call
    }
  });
}

test('an optional server that cannot start is skipped; a required one fails the run', async (t) => {
  if (!havePython(t)) return;
  const broken = (optional) => createMcpServer({ name: 'broken', command: '/nonexistent/mcp-server' }, { optional });
  const agent = createAgent({ id: 'opt', mcpServers: [testServer('good', markers(), { allowTools: ['echo'] }), broken(true)] });
  const client = new RecordingClient([text('ok')]);
  assert.equal((await agent.run({ input: 'go', client })).run.status, 'completed');
  await agent.close();
  assert.deepEqual(offered(client), ['echo']);
  const required = createAgent({ id: 'req', mcpServers: [broken(false)] });
  await assert.rejects(required.run({ input: 'go', client: createScriptedClient([text('ok')]) }),
    (e) => e instanceof AgentMcpError && e.message.startsWith("MCP server 'broken' could not start: "));
  await required.close();
});

test('a deferred server offers its tools only once tool_search loads them', async (t) => {
  if (!havePython(t)) return;
  const server = testServer('t', markers(), { allowTools: ['echo', 'add'], deferLoading: true });
  const agent = createAgent({ id: 'deferred', mcpServers: [server] });
  const client = new RecordingClient([
    calls(call('c1', 'tool_search', { query: 'echo text', limit: 1 })),
    calls(call('c2', 'echo', { text: 'hello' })),
    text('done'),
  ]);
  const result = await agent.run({ input: 'go', client });
  await agent.close();
  assert.equal(result.run.status, 'completed');
  assert.deepEqual(client.requests.map((r) => r.tools.map((tool) => tool.id)),
    [['tool_search'], ['tool_search', 'echo'], ['tool_search', 'echo']]);
  assert.equal(toolResults(result).at(-1).result, 'hello');
  assert.deepEqual(JSON.parse(JSON.stringify(result)).run.loadedTools, ['echo']);
});

test('progress notifications become tool.preliminary_result events in a stream', async (t) => {
  if (!havePython(t)) return;
  const agent = disposeAfter(t, createAgent({ id: 'p', mcpServers: [testServer('t', markers())] }));
  const stream = agent.stream({ input: 'go', client: createScriptedClient([calls(call('c1', 'count_up', { steps: 3 })), text('done')]) });
  const progress = [];
  for await (const e of stream.getToolStream()) if (e.type === 'tool.preliminary_result') progress.push(e.result);
  const result = await stream;
  assert.deepEqual(progress, [1, 2, 3].map((i) => ({ progress: i, total: 3, message: `step ${i}` })));
  assert.equal(toolResults(result)[0].result, 'counted 3');
});

test('close() stops the server, a later call starts it again; Symbol.asyncDispose closes it', async (t) => {
  if (!havePython(t)) return;
  const dir = markers();
  const agent = createAgent({ id: 'c', mcpServers: [testServer('t', dir)] });
  await agent.run({ input: 'go', client: createScriptedClient([text('ok')]) });
  const [first] = serverPids(dir);
  assert.ok(alive(first));
  await agent.close();
  assert.ok(await waitUntil(() => !alive(first), 5000));
  const again = await agent.run({ input: 'go', client: createScriptedClient([calls(call('c1', 'echo', { text: 'again' })), text('ok')]) });
  assert.equal(toolResults(again)[0].result, 'again');
  const second = serverPids(dir).find((p) => p !== first);
  assert.ok(alive(second));
  await agent[Symbol.asyncDispose](); // what `await using agent = ...` calls at the end of its block
  assert.ok(await waitUntil(() => !alive(second), 5000), 'the server outlived Symbol.asyncDispose');
});

const HOST = `
import { createAgent, createMcpServer, createScriptedClient } from ${JSON.stringify(path.join(ROOT, 'bindings-node/index.mjs'))};
const [python, server, dir, ending] = process.argv.slice(1);
const agent = createAgent({ id: 'host', mcpServers: [createMcpServer({ name: 't', command: python, args: [server], env: { PHASEO_MCP_MARKERS: dir } })] });
await agent.run({ input: 'go', client: createScriptedClient([{ text: 'ok' }]) });
console.log('ready');
if (ending === 'hang') setInterval(() => {}, 1000);
else process.exit(0);
`;

for (const ending of ['exit', 'sigkill']) {
  test(`no stdio child is left after the host process ends (${ending})`, async (t) => {
    if (!havePython(t)) return;
    const dir = markers();
    const host = spawn(process.execPath, ['--input-type=module', '-e', HOST, PYTHON, SERVER, dir, ending === 'sigkill' ? 'hang' : 'exit'],
      { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise((resolve) => host.on('exit', resolve));
    try {
      await new Promise((resolve, reject) => {
        let out = '';
        host.stdout.on('data', (c) => { out += c; if (out.includes('ready')) resolve(); });
        host.on('exit', () => (out.includes('ready') ? resolve() : reject(new Error(`host exited early: ${out}`))));
      });
      const [pid] = serverPids(dir);
      assert.ok(pid > 0);
      if (ending === 'sigkill') host.kill('SIGKILL');
      await exited;
      assert.ok(await waitUntil(() => !alive(pid), 5000), `MCP server ${pid} outlived its host`);
    } finally {
      if (host.exitCode === null && host.signalCode === null) host.kill('SIGKILL');
    }
  });
}

test('elicitation requests go to onElicitation', async (t) => {
  if (!haveEverything(t)) return;
  const asked = [];
  const server = createMcpServer({ name: 'everything', command: EVERYTHING, args: ['stdio'] }, {
    onElicitation: async (request, context) => { asked.push([context.server, request.message]); return { action: 'accept', content: { name: 'Ada Lovelace' } }; },
  });
  const agent = disposeAfter(t, createAgent({ id: 'eli', mcpServers: [server] }));
  const result = await agent.run({ input: 'go', client: createScriptedClient([calls(call('c1', 'trigger-elicitation-request')), text('ok')]) });
  assert.deepEqual(asked, [['everything', 'Please provide inputs for the following fields:']]);
  assert.ok(JSON.stringify(toolResults(result)[0].result).includes('Ada Lovelace'));
});

test('bad declarations get clear errors', () => {
  const def = (e, re) => e instanceof AgentDefinitionError && e.code === 'definition_invalid' && re.test(e.message);
  assert.throws(() => createMcpServer({ name: 't', command: 'x' }, { timeout: 5 }),
    (e) => def(e, /^Invalid MCP server 't': unknown field 'timeout' of a stdio server \(known: name, command, args, env, cwd, allowTools, /));
  assert.throws(() => createMcpServer({ name: 't', command: 'x' }, { allow_tools: [], bearerToken: 'x' }),
    (e) => def(e, /unknown field 'allow_tools' of a stdio server/));
  assert.throws(() => createMcpServer({ name: 't', url: 'http://x' }, { cwd: '/' }),
    (e) => def(e, /unknown field 'cwd' of an HTTP server \(known: name, url, headers, bearer\/bearerToken, .*toolTimeoutsMs\/toolTimeouts/));
  assert.throws(() => createMcpServer({ name: 't', command: 'x', url: 'http://x' }), (e) => def(e, /give either a command \(stdio\) or a url/));
  assert.throws(() => createMcpServer({ name: 't', command: 'x' }, { filter: 'all' }), (e) => def(e, /^Invalid MCP server 't': filter must be a function$/));
  assert.throws(() => createMcpServer({ name: 't', command: 'x' }, { requireApproval: 'sometimes' }),
    (e) => def(e, /requireApproval must be true, false, a predicate or "destructive"/));
  assert.throws(() => createMcpServer({ name: 't', command: 'x' }, { denyTools: 'crash' }), (e) => def(e, /denyTools must be an array of strings/));
  assert.throws(() => createMcpServer({ name: 'h', url: 'ftp://x' }),
    (e) => def(e, /^Invalid MCP server 'h': url must start with http:\/\/ or https:\/\//));
  assert.throws(() => createMcpServer({ name: 't', command: 'x' }, { timeoutMs: 0 }),
    (e) => def(e, /timeoutMs must be a positive number of milliseconds, got 0/));
  assert.throws(() => createMcpServer({ name: 't', command: 'x' }, { onError: 'explode' }),
    (e) => def(e, /^Invalid MCP server 't': onError must be "fail-run" or "return-to-model", got "explode"$/));
  assert.throws(() => createAgent({ id: 'x', mcpServers: [{ name: 'fake' }] }), (e) => def(e, /mcpServers must be an array of servers/));
  const s = createMcpServer({ name: 't', command: 'x' });
  assert.throws(() => createAgent({ id: 'x', mcpServers: [s, s] }), (e) => def(e, /duplicate MCP server name 't'/));
});
