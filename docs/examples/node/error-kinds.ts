import { AgentError, createAgent, createScriptedClient, defineTool } from "@phaseo/agent-sdk";

const lookup = defineTool({
  id: "lookup-order",
  description: "Look up an order",
  parameters: { type: "object", properties: { order: { type: "string" } }, required: ["order"] },
  execute: async (input: { order: string }) => {
    if (input.order === "B-0") throw new Error("order service down");
    return { order: input.order, status: "shipped" };
  },
});
const agent = createAgent({ id: "support", maxSteps: 2, tools: [lookup] });

/** One scripted model answer: a call of tool `name`. */
const call = (name: string, args: string) => ({ toolCalls: [{ id: "c1", name, arguments: args }] });

const attempts: [string, object[]][] = [
  ["arguments that fail the schema", [call("lookup-order", '{"order": 7}')]],
  ["a tool the agent does not have", [call("delete-everything", "{}")]],
  ["a tool that raises", [call("lookup-order", '{"order": "B-0"}')]],
  ["a model that never answers", [call("lookup-order", '{"order": "A-7"}'), call("lookup-order", '{"order": "A-7"}')]],
];
for (const [what, answers] of attempts) {
  try {
    await agent.run({ input: "where is my order?", client: createScriptedClient(answers) });
  } catch (error) {
    if (!(error instanceof AgentError)) throw error;
    // One family; `code` is the same in every language, and so is the message.
    console.log(`${what}\n  ${error.code}: ${error.message}`);
    if (error.result?.run.status !== "failed") throw new Error("the error carries the run's final state");
  }
}
