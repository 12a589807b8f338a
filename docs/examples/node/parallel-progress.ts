import { createAgent, createScriptedClient, defineTool } from "@phaseo/agent-sdk";

const checkService = defineTool({
  id: "check-service",
  description: "Check one service",
  parameters: { type: "object", properties: { service: { type: "string" } }, required: ["service"] },
  timeoutMs: 3000,
  async *execute(input: { service: string }) {
    yield { checking: input.service }; // a tool.preliminary_result event
    return { service: input.service, up: input.service !== "db" };
  },
});
const agent = createAgent({
  id: "status",
  tools: [checkService],
  // The three calls of one turn run side by side; results keep the model's call order.
  toolExecution: { toolConcurrency: 3 },
});
const client = createScriptedClient([
  {
    toolCalls: ["api", "db", "queue"].map((service, i) => ({
      id: `c${i + 1}`, name: "check-service", arguments: JSON.stringify({ service }),
    })),
  },
  { text: "api and queue are up; db is down." },
]);

const progress: string[] = [];
const result = await agent.run({
  input: "status?",
  client,
  onEvent(event) {
    if (event.type === "tool.preliminary_result") {
      const { checking } = event.result as { checking: string };
      progress.push(`${event.toolCallId} progress: checking ${checking}`);
    }
  },
});
console.log(progress.sort().join("\n")); // the calls overlap: their progress arrives in any order
console.log(result.output);
