import { createAgent, createScriptedClient, defineTool } from "@phaseo/agent-sdk";

const deploy = defineTool({
  id: "deploy",
  description: "Deploy a release",
  parameters: { type: "object", properties: { env: { type: "string" } }, required: ["env"] },
  requireApproval: true,
  timeoutMs: 5000,
  async *execute(input: { env: string }, context) {
    yield { phase: "rolling out" }; // progress
    return { deployed: input.env, key: context.toolCall.id };
  },
});
const agent = createAgent({ id: "ops", tools: [deploy] });
// A scripted model: the first answer calls the tool, the second is the final text.
const client = createScriptedClient([
  { toolCalls: [{ id: "c1", name: "deploy", arguments: '{"env":"prod"}' }] },
  { text: "Deployed." },
]);

const paused = await agent.run({ input: "deploy to prod", client });
const stored = JSON.stringify(paused); // persist anywhere; any language continues it
const done = await agent.continueRun({ state: stored, client, approvals: ["c1"] });
console.log(done.output); // Deployed.
