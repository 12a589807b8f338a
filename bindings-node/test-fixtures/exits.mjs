// Runs an agent with every kind of callback and relies on Node exiting by itself.
import { createAgent, createScriptedClient, defineTool } from '../index.mjs';

const agent = createAgent({
  id: 'exit-check',
  humanReview: () => null,
  stopWhen: () => false,
  tools: [defineTool({ id: 'add', inputSchema: (v) => v, async execute(i) { return i.a + i.b; } })],
});
const client = { async generate(request) { return request.messages.length === 1 ? { toolCalls: [{ id: 'c1', name: 'add', arguments: '{"a":2,"b":3}' }] } : { text: '5' }; } };
const result = await agent.run({ input: 'add', client, onEvent: () => {} });
const stream = agent.stream({ input: 'add', client: createScriptedClient([{ text: 'x' }]) });
await stream;
console.log(result.run.status, result.output);
