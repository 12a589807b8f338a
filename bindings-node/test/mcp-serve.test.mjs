// Tools served by `serveMcp` (docs/behaviour.md §19), called by clients we did not write:
// the official TypeScript SDK client (`@modelcontextprotocol/sdk`, tests/mcp/node_modules,
// installed by `make mcp-servers`) over stdio and Streamable HTTP, and the Python binding's
// MCP tools support (a Python agent calling a tool this binding serves). A missing client
// package fails these tests.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { AgentDefinitionError, createAgent, createScriptedClient, serveMcp } from '../index.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const FIXTURE = path.join(ROOT, 'bindings-node/test-fixtures/served-tools.mjs');
const fromTests = createRequire(path.join(ROOT, 'tests/mcp/package.json'));
const sdk = async (sub) => import(pathToFileURL(fromTests.resolve(`@modelcontextprotocol/sdk/${sub}`)).href);
const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');
const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');
const { ElicitRequestSchema } = await sdk('types.js');

const made = [];
after(() => { for (const dir of made) fs.rmSync(dir, { recursive: true, force: true }); });
function tempDir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'phaseo-serve-node-'));
  made.push(dir);
  return dir;
}

/** A connected SDK client; `approve`: undefined for a client without elicitation. */
async function connect(transport, mark, approve) {
  const asked = [];
  const progress = [];
  const client = new Client({ name: 'sdk-test', version: '1.0.0' },
    { capabilities: approve === undefined ? {} : { elicitation: {} } });
  if (approve !== undefined) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { approve } };
    });
  }
  const env = { ...process.env, CANCEL_MARK: mark };
  let child = null;
  if (transport === 'stdio') {
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [FIXTURE, 'stdio'], env }));
  } else {
    child = spawn(process.execPath, [FIXTURE, 'http'], { env, stdio: ['pipe', 'pipe', 'inherit'] });
    const url = await new Promise((resolve, reject) => {
      let text = '';
      child.stdout.on('data', (d) => {
        text += d;
        if (text.includes('\n')) resolve(text.split('\n')[0].trim());
      });
      child.on('exit', (code) => reject(new Error(`the server exited (${code})`)));
    });
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  }
  // The progress notifications as they arrive, before the SDK dispatches them (its client
  // drops one that it dispatches after the call's result: both often come in one read).
  const transportOf = client.transport;
  const deliver = transportOf.onmessage;
  transportOf.onmessage = (message, extra) => {
    if (message.method === 'notifications/progress') {
      const { progress: done, total, message: text } = message.params;
      progress.push([done, total, text]);
    }
    deliver(message, extra);
  };
  return {
    client,
    asked,
    progress,
    async close() {
      await client.close();
      if (child) {
        child.stdin.end();
        await new Promise((resolve) => (child.exitCode !== null ? resolve() : child.on('exit', resolve)));
      }
    },
  };
}

const text = (result) => result.content[0].text;

for (const transport of ['stdio', 'http']) {
  test(`${transport}: list, call, errors and progress through the SDK client`, async () => {
    const c = await connect(transport, path.join(tempDir(), 'c'));
    try {
      const { tools } = await c.client.listTools();
      const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
      assert.deepEqual(Object.keys(byName).sort(), ['add', 'delete', 'sleepy', 'slow', 'steps']);
      assert.deepEqual(byName.add.inputSchema.required, ['a', 'b']);
      assert.equal(byName.add.outputSchema.type, 'object');
      assert.equal(byName.delete.annotations.destructiveHint, true);
      assert.equal(byName.add.annotations.readOnlyHint, true);
      assert.equal(byName.add.title, 'Add numbers');
      const sum = await c.client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
      assert.deepEqual(sum.structuredContent, { sum: 5 });
      assert.equal(text(sum), '{"sum":5}');
      const invalid = await c.client.callTool({ name: 'add', arguments: { a: 'two' } });
      assert.equal(invalid.isError, true);
      assert.match(text(invalid), /^Invalid tool input/);
      const late = await c.client.callTool({ name: 'sleepy', arguments: {} });
      assert.equal(late.isError, true);
      assert.equal(text(late), 'Tool sleepy timed out after 200ms');
      const seen = [];
      const done = await c.client.callTool({ name: 'steps', arguments: {} }, undefined,
        { onprogress: (p) => seen.push([p.progress, p.total, p.message]) });
      assert.equal(text(done), '2');
      // Every notification reaches the client before the result; the SDK hands on those it
      // dispatched before the result's (seen), in order.
      const expected = [[1, 2, 'half'], [2, undefined, 'almost']];
      assert.deepEqual(c.progress, expected);
      assert.deepEqual(seen, expected.slice(0, seen.length));
      const refused = await c.client.callTool({ name: 'delete', arguments: { path: '/x' } });
      assert.equal(refused.isError, true);
      assert.equal(text(refused), 'Tool delete requires approval and this client cannot be asked');
    } finally {
      await c.close();
    }
  });

  test(`${transport}: approval accepted and declined through elicitation`, async () => {
    const yes = await connect(transport, path.join(tempDir(), 'c'), true);
    try {
      const ok = await yes.client.callTool({ name: 'delete', arguments: { path: '/x' } });
      assert.equal(text(ok), 'deleted /x');
      assert.match(yes.asked[0], /delete/);
      assert.match(yes.asked[0], /\{"path":"\/x"\}/);
    } finally {
      await yes.close();
    }
    const no = await connect(transport, path.join(tempDir(), 'c'), false);
    try {
      const refused = await no.client.callTool({ name: 'delete', arguments: { path: '/x' } });
      assert.equal(refused.isError, true);
      assert.equal(text(refused), 'Tool call rejected by human');
    } finally {
      await no.close();
    }
  });

  test(`${transport}: an aborted call cancels the executor`, async () => {
    const mark = path.join(tempDir(), 'cancelled');
    const c = await connect(transport, mark);
    try {
      const abort = new AbortController();
      const call = c.client.callTool({ name: 'slow', arguments: {} }, undefined,
        { signal: abort.signal, onprogress: () => abort.abort() });
      await assert.rejects(call);
      for (let i = 0; i < 600 && !fs.existsSync(mark); i++) await new Promise((r) => setTimeout(r, 100));
      assert.ok(fs.existsSync(mark), 'the executor was not cancelled');
    } finally {
      await c.close();
    }
  });
}

test('a Python agent calls a tool served by Node (our MCP client, another binding)', () => {
  const python = path.join(ROOT, '.venvs/py/bin/python');
  const script = `
import json, sys
from phaseo_agent import ScriptedClient, create_agent, mcp_stdio_server
server = mcp_stdio_server("node", sys.argv[1], [sys.argv[2], "stdio"])
with create_agent(id="caller", mcp_servers=[server]) as agent:
    client = ScriptedClient([{"tool_calls": [{"id": "c1", "name": "add", "arguments": json.dumps({"a": 4, "b": 5})}]},
                             {"text": "done"}])
    result = agent.run(input="go", client=client)
print(json.dumps([r for s in result.step_results for r in s["tool_results"]]))
`;
  const run = spawnSync(python, ['-c', script, process.execPath, FIXTURE], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(run.status, 0, run.stderr);
  const results = JSON.parse(run.stdout.trim().split('\n').pop());
  assert.deepEqual(results[0].result, { sum: 9 });
});

test('serveMcp refuses a tool without execute and an unknown option', async () => {
  await assert.rejects(serveMcp({ name: 'x', tools: [{ id: 'ask', description: 'Asks', execute: false }] }),
    (e) => e instanceof AgentDefinitionError && e.message === 'Tool ask has no execute and cannot be served over MCP');
  await assert.rejects(serveMcp({ name: 'x', tools: [], tool: [] }),
    (e) => e instanceof AgentDefinitionError && /unknown key 'tool'/.test(e.message));
});

test('asyncDispose (what `await using` calls) closes an HTTP server', async () => {
  const server = await serveMcp({ name: 'x', transport: 'http',
    tools: [{ id: 'hi', description: 'Says hi', execute: () => 'hi' }] });
  const url = server.url;
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  await server[Symbol.asyncDispose ?? Symbol.for('Symbol.asyncDispose')]();
  await server.closed;
  await assert.rejects(fetch(url, { method: 'POST' }));
});

// One agent served as a single tool (docs/behaviour.md §19): its model calls `delete`
// (approval-gated), then answers; the approval is asked of the SDK client.
async function servedResearcher(extraTools = []) {
  const deleted = [];
  const researcher = createAgent({
    id: 'researcher',
    tools: [{
      id: 'delete',
      description: 'Deletes a file',
      requireApproval: true,
      execute: ({ path: p }) => { deleted.push(p); return `deleted ${p}`; },
    }, ...extraTools],
  });
  const calls = extraTools.length
    ? [{ id: 'n1', name: extraTools[0].id, arguments: '{}' }]
    : [{ id: 'n1', name: 'delete', arguments: '{"path":"/tmp/x"}' }];
  const server = await serveMcp({
    agent: researcher,
    client: createScriptedClient([{ toolCalls: calls }, { text: 'researched' }]),
    description: 'Researches',
    name: 'node-agent',
    transport: 'http',
  });
  return { server, deleted };
}

async function sdkClient(url, approve) {
  const asked = [];
  const client = new Client({ name: 'sdk-test', version: '1.0.0' },
    { capabilities: approve === undefined ? {} : { elicitation: {} } });
  if (approve !== undefined) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { approve } };
    });
  }
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return { client, asked };
}

test('an agent served as one tool: listed with the agent-tool schema, a call runs it', async () => {
  const { server, deleted } = await servedResearcher();
  const { client, asked } = await sdkClient(server.url, true);
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['researcher']);
    assert.equal(tools[0].description, 'Researches');
    assert.deepEqual(tools[0].inputSchema,
      { type: 'object', properties: { input: { type: 'string' } }, required: ['input'] });
    const done = await client.callTool({ name: 'researcher', arguments: { input: 'find x' } });
    assert.equal(done.isError ?? false, false);
    assert.equal(text(done), 'researched');
    assert.deepEqual(deleted, ['/tmp/x']);
    assert.equal(asked.length, 1);
    assert.match(asked[0], /delete/);
    assert.match(asked[0], /\{"path":"\/tmp\/x"\}/);
  } finally {
    await client.close();
    await server.close();
  }
});

test('a served agent: a declined approval is its rejection, a client without elicitation an error', async () => {
  const declined = await servedResearcher();
  const no = await sdkClient(declined.server.url, false);
  try {
    const done = await no.client.callTool({ name: 'researcher', arguments: { input: 'find x' } });
    // The agent saw `Tool call rejected by human` and answered anyway.
    assert.equal(done.isError ?? false, false);
    assert.equal(text(done), 'researched');
    assert.deepEqual(declined.deleted, []);
    assert.equal(no.asked.length, 1);
  } finally {
    await no.client.close();
    await declined.server.close();
  }
  const unasked = await servedResearcher();
  const plain = await sdkClient(unasked.server.url, undefined);
  try {
    const refused = await plain.client.callTool({ name: 'researcher', arguments: { input: 'find x' } });
    assert.equal(refused.isError, true);
    assert.equal(text(refused), 'Tool delete requires approval and this client cannot be asked');
    assert.deepEqual(unasked.deleted, []);
  } finally {
    await plain.client.close();
    await unasked.server.close();
  }
});

test('a served agent whose run pauses for a client tool gets an error result', async () => {
  const { server } = await servedResearcher([{ id: 'ask', description: 'Asks a person', execute: false }]);
  const { client } = await sdkClient(server.url, true);
  try {
    const paused = await client.callTool({ name: 'researcher', arguments: { input: 'find x' } });
    assert.equal(paused.isError, true);
    assert.equal(text(paused), 'Tool ask asks a person for its result and cannot be served');
  } finally {
    await client.close();
    await server.close();
  }
});

test('serveMcp refuses an agent without a client, and an agent with tools', async () => {
  const agent = createAgent({ id: 'a', tools: [] });
  await assert.rejects(serveMcp({ name: 'x', agent }),
    (e) => e instanceof AgentDefinitionError
      && e.message === 'Tool a runs an agent and needs a model client to be served: give the server a client');
  await assert.rejects(serveMcp({ name: 'x', agent, client: createScriptedClient([]),
    tools: [{ id: 'hi', description: 'Says hi', execute: () => 'hi' }] }),
  (e) => e instanceof AgentDefinitionError && /not both/.test(e.message));
});
