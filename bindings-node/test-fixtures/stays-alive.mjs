// A run whose only pending work is an unref'd JS timer, then one whose tool never settles
// and times out (only the runtime's timer is pending): the runs alone keep Node alive
// until they end, then Node exits by itself.
import { setTimeout as sleep } from 'node:timers/promises';
import { createAgent, createScriptedClient, defineTool } from '../index.mjs';

const call = (id, name) => ({ toolCalls: [{ id, name, arguments: '{}' }] });
const agent = createAgent({
  id: 'alive-check',
  toolExecution: { onError: 'return-to-model' },
  tools: [
    defineTool({ id: 'nap', async execute() { await sleep(50, undefined, { ref: false }); return 'rested'; } }),
    defineTool({ id: 'stuck', timeoutMs: 50, execute: () => new Promise(() => {}) }),
  ],
});
const napped = await agent.run({ input: 'go', client: createScriptedClient([call('c1', 'nap'), { text: 'done' }]) });
const stuck = await agent.run({ input: 'go', client: createScriptedClient([call('c2', 'stuck'), { text: 'done' }]) });
const toolText = (r) => r.run.messages.find((m) => m.role === 'tool').content;
console.log(JSON.stringify([napped.output, toolText(napped), stuck.output, toolText(stuck)]));
