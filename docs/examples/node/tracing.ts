import { createAgent, createScriptedClient, defineTool, enableTracing, flushTracing } from "@phaseo/agent-sdk";

// Every run from now on records spans. The collector's address comes from
// OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318) unless `endpoint` is given.
enableTracing({ serviceName: "orders-bot" });

const lookup = defineTool({
  id: "lookup-order",
  description: "Look up an order",
  parameters: { type: "object", properties: { order: { type: "string" } }, required: ["order"] },
  execute: async (input: { order: string }) => ({ order: input.order, status: "shipped" }),
});
const client = createScriptedClient([
  { toolCalls: [{ id: "c1", name: "lookup-order", arguments: '{"order": "A-7"}' }] },
  { text: "Order A-7 has shipped." },
]);
const agent = createAgent({ id: "support", tools: [lookup] });
try {
  console.log((await agent.run({ input: "where is order A-7?", client })).output);
} finally {
  await agent.close();
}
await flushTracing(); // export now (what is left is also exported before the process exits)
