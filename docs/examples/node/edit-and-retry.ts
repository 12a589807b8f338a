import { createAgent, createScriptedClient, defineTool } from "@phaseo/agent-sdk";

const deploy = defineTool({
  id: "deploy",
  description: "Deploy a release",
  parameters: {
    type: "object",
    properties: { env: { enum: ["staging", "production"] } },
    required: ["env"],
  },
  requireApproval: true,
  retry: { maxAttempts: 3, backoffMs: 10 },
  maxCalls: 1, // at most one deploy per run
  async execute(input: { env: string }, context) {
    if (context.attempt === 1) { // the first attempt fails; the SDK retries it
      console.log(`attempt 1 to deploy to ${input.env}: registry busy`);
      throw new Error("registry busy");
    }
    // The same key on every attempt and after any continue: hand it to the service.
    if (!context.idempotencyKey.endsWith(":c1")) throw new Error("unexpected key");
    console.log(`attempt ${context.attempt} deployed to ${input.env}`);
    return { deployed: input.env };
  },
});
const agent = createAgent({ id: "ops", tools: [deploy] });
const client = createScriptedClient([
  { toolCalls: [{ id: "c1", name: "deploy", arguments: '{"env":"production"}' }] },
  { text: "Deployed to staging." },
]);

const paused = await agent.run({ input: "deploy", client });
// The person approves, but to staging: the edited input is validated before anything runs.
const done = await agent.continueRun({
  state: JSON.stringify(paused),
  client,
  approvals: [{ toolCallId: "c1", editedInput: { env: "staging" } }],
});
console.log(done.output);
