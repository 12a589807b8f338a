// One side of the trace handoff check, in Node (see step.py).
import { readFileSync, writeFileSync } from 'node:fs';
import { createAgent, createScriptedClient, defineTool, enableTracing } from '../../bindings-node/index.mjs';

const [mode, path] = process.argv.slice(2);
enableTracing({ serviceName: 'handoff-node' });
const agent = createAgent({ id: 'mailer', tools: [defineTool({ id: 'send', execute: () => 'sent', requireApproval: true })] });
let state;
if (mode === 'pause') {
  state = await agent.run({ input: 'mail bob', client: createScriptedClient([{ toolCalls: [{ id: 'c1', name: 'send', arguments: '{}' }] }]) });
  if (state.run.status !== 'waiting_for_human') throw new Error(state.run.status);
  writeFileSync(path, JSON.stringify(state));
} else {
  state = await agent.continueRun({ state: readFileSync(path, 'utf8'), client: createScriptedClient([{ text: 'done' }]), approvals: ['c1'] });
  if (state.run.status !== 'completed') throw new Error(state.run.status);
  writeFileSync(`${path}.done`, JSON.stringify(state));
}
console.log(state.run.traceparent);
