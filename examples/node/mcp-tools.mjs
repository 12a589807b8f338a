// An agent using the tools of a real MCP server: the reference server
// `@modelcontextprotocol/server-everything`, started as a child process over stdio.
//
//   node examples/node/mcp-tools.mjs      (needs `make mcp-servers`)
//
// Its tools become the agent's tools (prefixed `ev_`, only the ones allowed), validated by
// the core against their MCP input schemas; structured results come back as values, and
// the server's progress notifications arrive in the stream as `tool.preliminary_result`
// events. A scripted model stands in for a real one (see the README for real clients).
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { createAgent, createMcpServer, createScriptedClient } from '../../bindings-node/index.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const everything = createMcpServer(
  { name: 'everything', command: path.join(root, 'tests/mcp/node_modules/.bin/mcp-server-everything'), args: ['stdio'] },
  { toolPrefix: 'ev', allowTools: ['get-sum', 'get-structured-content', 'trigger-long-running-operation'], timeoutMs: 10_000 },
);
const agent = createAgent({ id: 'mcp-demo', mcpServers: [everything] });
const model = createScriptedClient([
  { toolCalls: [
    { id: 'c1', name: 'ev_get-sum', arguments: JSON.stringify({ a: 17, b: 25 }) },
    { id: 'c2', name: 'ev_get-structured-content', arguments: JSON.stringify({ location: 'Chicago' }) },
    { id: 'c3', name: 'ev_trigger-long-running-operation', arguments: JSON.stringify({ duration: 1, steps: 4 }) },
  ] },
  { text: 'Sum, weather and the long operation are done.' },
]);

try {
  const stream = agent.stream({ input: 'Add 17 and 25, get the weather in Chicago, run the long operation', client: model });
  for await (const event of stream.getToolStream()) {
    if (event.type === 'tool.preliminary_result') console.log(`  progress ${event.toolName} ${JSON.stringify(event.result)}`);
  }
  const result = await stream;
  for (const r of result.stepResults.flatMap((s) => s.toolResults)) console.log(`  ${r.toolName}: ${JSON.stringify(r.result ?? r.error)}`);
  console.log('status:', result.run.status);
  console.log('output:', result.output);
} finally {
  await agent.close(); // stops the server (also: `await using agent = createAgent(...)`)
}
