// Tools served over MCP for test/mcp-serve.test.mjs and the Python agent that calls them:
// `node served-tools.mjs stdio|http`. In HTTP mode the endpoint URL is the first line of
// stdout and the server stops when stdin closes. CANCEL_MARK names the file the `slow`
// tool writes when its call is cancelled.
import fs from 'node:fs';

import { defineTool, serveMcp } from '../index.mjs';

const tools = [
  defineTool({
    id: 'add',
    description: 'Adds two numbers',
    parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
    outputSchema: { type: 'object', properties: { sum: { type: 'number' } } },
    annotations: { readOnlyHint: true, title: 'Add numbers' },
    execute: ({ a, b }) => ({ sum: a + b }),
  }),
  defineTool({
    id: 'slow',
    description: 'Waits until cancelled',
    execute: (_input, ctx) => new Promise((resolve) => {
      ctx.emitProgress('started');
      ctx.signal.addEventListener('abort', () => {
        fs.writeFileSync(process.env.CANCEL_MARK, 'cancelled');
        resolve('cancelled');
      });
    }),
  }),
  defineTool({
    id: 'steps',
    description: 'Reports progress',
    execute: (_input, ctx) => {
      ctx.emitProgress({ progress: 1, total: 2, message: 'half' });
      ctx.emitProgress('almost');
      return 2;
    },
  }),
  defineTool({
    id: 'delete',
    description: 'Deletes a file',
    requireApproval: true,
    execute: ({ path }) => `deleted ${path}`,
  }),
  defineTool({
    id: 'sleepy',
    description: 'Too slow',
    timeoutMs: 200,
    execute: () => new Promise((resolve) => setTimeout(() => resolve('late'), 5000)),
  }),
];

const mode = process.argv[2] ?? 'stdio';
const server = await serveMcp({
  tools,
  name: 'node-tools',
  version: '1.0.0',
  transport: mode === 'http' ? { type: 'http' } : 'stdio',
  toolExecution: { toolConcurrency: 4 },
});
if (mode === 'http') {
  process.stdout.write(`${server.url}\n`);
  process.stdin.on('end', () => { server.close(); });
  process.stdin.resume();
}
await server.closed;
