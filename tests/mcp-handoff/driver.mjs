// The Node driver of the cross-language MCP handoff (contract: tests/mcp-handoff/run.sh).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { createAgent, createMcpServer, createScriptedClient } from '../../bindings-node/index.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const [mode, stateFile] = process.argv.slice(2);
const files = createMcpServer(
  { name: 'files', command: process.env.PHASEO_PYTHON, args: [path.join(root, 'tests/mcp/test_server.py')],
    env: { PHASEO_MCP_MARKERS: process.env.PHASEO_MCP_MARKERS } },
  { toolPrefix: 'files', requireApproval: 'destructive' },
);
const agent = createAgent({ id: 'mcp-handoff', mcpServers: [files] });
try {
  if (mode === 'pause') {
    const client = createScriptedClient([
      { toolCalls: [{ id: 'c1', name: 'files_delete_file', arguments: JSON.stringify({ path: 'report.txt' }) }] },
      { text: 'Deleted report.txt.' },
    ]);
    const paused = await agent.run({ input: 'Delete report.txt', client });
    fs.writeFileSync(stateFile, JSON.stringify(paused));
    console.log(JSON.stringify({ pid: process.pid, status: paused.run.status }));
  } else if (mode === 'continue') {
    const state = fs.readFileSync(stateFile, 'utf8');
    const done = await agent.continueRun({ state, client: createScriptedClient([{ text: 'Deleted report.txt.' }]), approvals: ['c1'] });
    console.log(JSON.stringify({ pid: process.pid, status: done.run.status, output: done.output }));
  } else {
    throw new Error(`unknown mode ${mode}: use pause or continue`);
  }
} finally {
  await agent.close();
}
