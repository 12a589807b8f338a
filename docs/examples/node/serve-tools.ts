// Two tools served over MCP on this process's stdin and stdout: an MCP client (an IDE, a
// desktop assistant, another agent) starts this program and calls them.
import { defineTool, serveMcp } from "@phaseo/agent-sdk";

const order = { type: "object", properties: { order: { type: "string" } }, required: ["order"] };

const lookup = defineTool({
  id: "lookup-order",
  description: "Look up an order",
  parameters: order,
  execute: async (input: { order: string }) => ({ order: input.order, status: "shipped" }),
});
const cancel = defineTool({
  id: "cancel-order",
  description: "Cancel an order",
  parameters: order,
  execute: async (input: { order: string }) => ({ order: input.order, cancelled: true }),
});

// stdout now speaks MCP: log to stderr, never console.log. Serves until the client closes stdin.
const server = await serveMcp({ tools: [lookup, cancel], name: "orders" });
await server.closed;
