import { createAgent, type ModelRequest } from "@phaseo/agent-sdk";

// A model client of your own: an object with `generate(request)` (or a plain function), sync
// or async; `stream(request)` may be added for streamed runs. Here it answers without a real model.
const echoModel = {
  async generate(request: ModelRequest) {
    const question = request.messages[request.messages.length - 1].content;
    return { message: { content: `${request.agentId} heard: ${String(question)}` } };
  },
};

const agent = createAgent({ id: "support" });
console.log((await agent.run({ input: "where is order A-7?", client: echoModel })).output);
