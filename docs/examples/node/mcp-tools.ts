import { createAgent, createMcpServer, createScriptedClient } from "@phaseo/agent-sdk";

// An MCP server started as a child process and spoken to over stdio: here the protocol's
// reference server, installed under tests/mcp; any server's command works the same way.
const everything = createMcpServer(
  {
    name: "everything",
    command: "node",
    args: ["tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"],
  },
  { allowTools: ["echo"] }, // offer only these of the server's tools
);
// A scripted model: the first answer calls the server's tool, the second is the final text.
const client = createScriptedClient([
  { toolCalls: [{ id: "c1", name: "echo", arguments: '{"message": "hello"}' }] },
  { text: "The server said hello." },
]);

// The server starts when a run first needs its tools and stops with the agent.
const agent = createAgent({ id: "assistant", mcpServers: [everything] });
try {
  const result = await agent.run({
    input: "say hello through the server",
    client,
    onEvent: (event) => {
      if (event.type === "tool.completed") console.log(`${String(event.toolName)} -> ${String(event.output)}`);
    },
  });
  console.log(result.output);
} finally {
  await agent.close(); // or `await using agent = …` where the runtime has it
}
