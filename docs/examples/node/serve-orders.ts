import { createAgent, createMcpServer, createScriptedClient, defineTool, serveMcp } from "@phaseo/agent-sdk";

const lookup = defineTool({
  id: "lookup-order",
  description: "Look up an order",
  parameters: { type: "object", properties: { order: { type: "string" } }, required: ["order"] },
  execute: async (input: { order: string }) => ({ order: input.order, status: "shipped" }),
});

// Serve the tool over Streamable HTTP, on 127.0.0.1 and a free port (stdio is the default:
// `await serveMcp({ tools, name })` in a process an MCP client starts).
const server = await serveMcp({ tools: [lookup], name: "orders", transport: { type: "http" } });
// Any MCP client can call it now; here, an agent of this SDK.
const agent = createAgent({ id: "support", mcpServers: [createMcpServer({ name: "orders", url: server.url! })] });
try {
  const client = createScriptedClient([
    { toolCalls: [{ id: "c1", name: "lookup-order", arguments: '{"order": "A-7"}' }] },
    { text: "Order A-7 has shipped." },
  ]);
  const result = await agent.run({
    input: "where is order A-7?",
    client,
    onEvent: (event) => {
      if (event.type === "tool.completed") {
        console.log(`${String(event.toolName)} -> ${(event.output as { status: string }).status}`);
      }
    },
  });
  console.log(result.output);
} finally {
  await agent.close();
  await server.close();
}
