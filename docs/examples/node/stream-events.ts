import { createAgent, createScriptedClient, defineTool } from "@phaseo/agent-sdk";

const lookup = defineTool({
  id: "lookup-order",
  description: "Look up an order",
  parameters: { type: "object", properties: { order: { type: "string" } }, required: ["order"] },
  execute: async (input: { order: string }) => ({ order: input.order, status: "shipped" }),
});
const agent = createAgent({ id: "support", tools: [lookup] });
// A scripted model: the first answer calls the tool, the second is the final text.
const client = createScriptedClient([
  { toolCalls: [{ id: "c1", name: "lookup-order", arguments: '{"order": "A-7"}' }] },
  { text: "Order A-7 has shipped." },
]);

const stream = agent.stream({ input: "where is order A-7?", client });
for await (const event of stream.getEventStream()) {
  // Text, and the tool's arguments as the model writes them, arrive as deltas.
  const delta = "delta" in event ? ` [${String(event.delta)}]` : "";
  console.log(event.type + delta);
}
console.log((await stream).output); // replayed: every consumer sees the whole run
