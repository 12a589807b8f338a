// Drives a served MCP server (docs/behaviour.md §19) with the official TypeScript SDK client
// (`@modelcontextprotocol/sdk`, pinned in tests/mcp/package.json, installed by
// `make mcp-servers`). The command line, the scenarios and what each prints are
// tests/mcp/served_client.py's (the Python SDK client), so a serving test can use either:
//
//   node ts_client.mjs SCENARIO none|yes|no [--mark FILE] [--annotated] [--output-schema] (--url URL | [--spawn-url] -- COMMAND...)
//
// Scenarios: `tools`, `cancel`, `agent` print one JSON line of what the client saw; `check`
// asserts every behaviour and prints {"passed": [...], "failed": [...]} (exit 1 on a failure).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import process from 'node:process';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const USAGE = 'usage: ts_client.mjs SCENARIO none|yes|no [--mark FILE] [--annotated] [--output-schema] (--url URL | [--spawn-url] -- COMMAND...)';

function fail(message) {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

/** The parsed command line (as served_client.py's Options). */
function parse(argv) {
  if (argv.length < 3) fail(USAGE);
  const opts = { scenario: argv[0], approve: argv[1], mark: null, annotated: false, outputSchema: false, url: null, spawn: false, command: [] };
  const rest = argv.slice(2);
  while (rest.length) {
    const arg = rest.shift();
    if (arg === '--mark') opts.mark = rest.shift();
    else if (arg === '--annotated') opts.annotated = true;
    else if (arg === '--output-schema') opts.outputSchema = true;
    else if (arg === '--url') opts.url = rest.shift();
    else if (arg === '--spawn-url') opts.spawn = true;
    else if (arg === '--') opts.command = rest.splice(0);
    else fail(`unknown argument ${JSON.stringify(arg)}\n${USAGE}`);
  }
  if (!(opts.scenario in SCENARIOS) || !['none', 'yes', 'no'].includes(opts.approve)
      || (opts.url === null) === (opts.command.length === 0)) fail(USAGE);
  opts.env = { ...process.env };
  if (opts.mark !== null) opts.env.CANCEL_MARK = opts.mark;
  return opts;
}

/** Starts a `--spawn-url` server: its URL and a function that stops it (closes its stdin). */
async function spawnServer(opts) {
  const child = spawn(opts.command[0], opts.command.slice(1), { env: opts.env, stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const url = await new Promise((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (d) => {
      text += d;
      if (text.includes('\n')) resolve(text.split('\n')[0].trim());
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`the server printed no URL (exit ${code})`)));
  });
  return {
    url,
    async stop() {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * A connected client; `answers`: undefined for a client without the elicitation capability,
 * else the answer to each elicitation in turn (the last one repeats): 'yes'/'no' (accept
 * with that approval) or 'decline'. `progress` collects every progress
 * notification as it arrives: the SDK drops one it dispatches after the call's result
 * (both often come in one read), so they are taken from the transport.
 */
async function connect(opts, url, answers) {
  const asked = [];
  const progress = [];
  const client = new Client({ name: 'phaseo-ts-client', version: '1.0.0' },
    { capabilities: answers === undefined ? {} : { elicitation: {} } });
  if (answers !== undefined) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      const answer = answers[Math.min(asked.length, answers.length - 1)];
      asked.push(request.params.message);
      if (answer === 'decline') return { action: 'decline' };
      return { action: 'accept', content: { approve: answer === 'yes' } };
    });
  }
  if (url !== null) {
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  } else {
    await client.connect(new StdioClientTransport({
      command: opts.command[0], args: opts.command.slice(1), env: opts.env, stderr: 'inherit',
    }));
  }
  const transport = client.transport;
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (message.method === 'notifications/progress') {
      const { progress: done, total, message: text } = message.params;
      progress.push([done, total ?? null, text ?? null]);
    }
    deliver(message, extra);
  };
  return { client, asked, progress };
}

/** A session for `body`, closed after it. */
async function session(opts, url, answers, body) {
  const s = await connect(opts, url, answers);
  try {
    return await body(s);
  } finally {
    await s.client.close();
  }
}

function result(r) {
  const text = (r.content ?? []).find((b) => b.type === 'text');
  return { isError: Boolean(r.isError), text: text ? text.text : null, structured: r.structuredContent ?? null };
}

async function listed(client) {
  const { tools } = await client.listTools();
  return Object.fromEntries(tools.map((t) => [t.name, t]));
}

async function call(client, name, args, options) {
  return result(await client.callTool({ name, arguments: args }, undefined, options));
}

/** Calls slow and aborts the call (notifications/cancelled) at its first progress. */
async function cancelSlow(client) {
  const abort = new AbortController();
  const pending = client.callTool({ name: 'slow', arguments: {} }, undefined,
    { signal: abort.signal, onprogress: () => abort.abort() });
  try {
    await pending;
    return false;
  } catch {
    return abort.signal.aborted;
  }
}

/** Whether the cancelled tool wrote its mark (within 120 s). */
async function observed(mark) {
  for (let i = 0; i < 1200; i++) {
    if (fs.existsSync(mark)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

/** The elicitation answers APPROVE asks for. */
const answerOf = (opts) => (opts.approve === 'none' ? undefined : [opts.approve]);

async function tools(opts, url, out) {
  await session(opts, url, answerOf(opts), async ({ client, asked, progress }) => {
    out.tools = await listed(client);
    out.add = await call(client, 'add', { a: 2, b: 3 });
    out.invalid = await call(client, 'add', { a: 'two' });
    out.sleepy = await call(client, 'sleepy', {});
    progress.length = 0;
    out.steps = await call(client, 'steps', {}, { onprogress: () => {} });
    out.progress = [...progress];
    out.delete = await call(client, 'delete', { path: '/x' });
    out.asked = asked;
  });
}

async function cancel(opts, url, out) {
  if (opts.mark !== null) fs.rmSync(opts.mark, { force: true });
  await session(opts, url, answerOf(opts), async ({ client }) => {
    out.cancelled = await cancelSlow(client);
    if (opts.mark !== null) out.observed = await observed(opts.mark);
    // The session stays usable after a cancelled call.
    out.add = await call(client, 'add', { a: 1, b: 1 });
  });
}

async function agent(opts, url, out) {
  await session(opts, url, answerOf(opts), async ({ client, asked }) => {
    out.tools = await listed(client);
    out.call = await call(client, 'researcher', { input: 'find x' });
    out.asked = asked;
  });
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

async function check(opts, url, out) {
  out.passed = [];
  out.failed = [];
  const expect = (name, ok, detail = '') => {
    if (ok) out.passed.push(name);
    else out.failed.push({ check: name, detail: JSON.stringify(detail) });
  };
  if (opts.mark !== null) fs.rmSync(opts.mark, { force: true });
  // Two sessions (two server processes over stdio): one without the elicitation
  // capability, one that accepts the first approval and declines the second.
  await session(opts, url, undefined, async ({ client, progress }) => {
    const listedTools = await listed(client);
    expect('list', same(Object.keys(listedTools).sort(), ['add', 'delete', 'sleepy', 'slow', 'steps']), Object.keys(listedTools));
    const add = listedTools.add ?? {};
    expect('input schema', same(add.inputSchema?.required, ['a', 'b']), add);
    if (opts.outputSchema) expect('output schema', same(add.outputSchema?.properties, { sum: { type: 'number' } }), add);
    expect('approval is destructive', listedTools.delete?.annotations?.destructiveHint === true, listedTools.delete);
    if (opts.annotated) {
      expect('annotations', add.annotations?.readOnlyHint === true, add);
      expect('title', add.title === 'Add numbers' || add.annotations?.title === 'Add numbers', add);
    }
    const summed = await call(client, 'add', { a: 2, b: 3 });
    expect('call', summed.isError === false, summed);
    expect('structured output', same(summed.structured, { sum: 5 }), summed);
    let asText = null;
    try { asText = JSON.parse(summed.text); } catch { /* reported below */ }
    expect('structured output as text', same(asText, { sum: 5 }), summed);
    const invalid = await call(client, 'add', { a: 'two' });
    expect('validation error', invalid.isError && (invalid.text ?? '').startsWith('Invalid tool input'), invalid);
    const unknown = await call(client, 'nope', {});
    expect('unknown tool', unknown.isError, unknown);
    const late = await call(client, 'sleepy', {});
    expect('timeout', late.isError && late.text === 'Tool sleepy timed out after 200ms', late);
    progress.length = 0;
    const done = await call(client, 'steps', {}, { onprogress: () => {} });
    expect('progress result', done.text === '2', done);
    expect('progress', same(progress, [[1, 2, 'half'], [2, null, 'almost']]), progress);
    const refused = await call(client, 'delete', { path: '/x' });
    expect('no elicitation', refused.isError
      && refused.text === 'Tool delete requires approval and this client cannot be asked', refused);
    await cancelSlow(client);
    if (opts.mark !== null) expect('cancellation reaches the tool', await observed(opts.mark), 'no mark after 120 s');
    const after = await call(client, 'add', { a: 1, b: 1 });
    expect('usable after a cancellation', same(after.structured, { sum: 2 }), after);
  });
  await session(opts, url, ['yes', 'decline'], async ({ client, asked }) => {
    const ok = await call(client, 'delete', { path: '/x' });
    expect('approved', !ok.isError && ok.text === 'deleted /x', ok);
    expect('elicitation message', asked.length === 1 && asked[0].includes('delete') && asked[0].includes('{"path":"/x"}'), asked);
    const no = await call(client, 'delete', { path: '/x' });
    expect('declined', no.isError && no.text === 'Tool call rejected by human', no);
  });
}

const SCENARIOS = { tools, cancel, agent, check };

const opts = parse(process.argv.slice(2));
const deadline = setTimeout(() => fail('the scenario did not finish in 300 s'), 300_000);
const server = opts.spawn ? await spawnServer(opts) : null;
const out = {};
try {
  await SCENARIOS[opts.scenario](opts, server ? server.url : opts.url, out);
} finally {
  if (server) await server.stop();
}
clearTimeout(deadline);
// Exits once the line is written: an HTTP client's idle keep-alive sockets would hold the
// process open.
process.stdout.write(`${JSON.stringify(out)}\n`, () => process.exit(out.failed?.length ? 1 : 0));
