// The product's Tools page, TypeScript samples, verbatim (checked by
// scripts/check-tools-page-samples.py): each runs against a scripted model and behaves as the
// page says. Compiled by test/tools-page.tsconfig.json (strict), then run by `node --test`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createAgent, createScriptedClient } from "@phaseo/agent-sdk";

// The tickets service the first sample fetches from, answered here.
const tickets: string[] = [];
globalThis.fetch = (async (url: string | URL | Request, init?: RequestInit) => {
  tickets.push(String(url));
  assert.ok(init?.signal instanceof AbortSignal, "the call's AbortSignal is handed to fetch");
  return new Response(JSON.stringify({ id: String(url).split("/").pop(), status: "open" }));
}) as typeof fetch;

import { defineTool } from "@phaseo/agent-sdk";

const fetchTicket = defineTool({
  id: "fetch-ticket",
  description: "Load one internal support ticket.",
  parameters: {
    type: "object",
    properties: {
      ticketId: { type: "string" },
    },
    required: ["ticketId"],
    additionalProperties: false,
  },
  timeoutMs: 3_000,
  async execute(input: { ticketId: string }, context) {
    const response = await fetch(
      `https://internal.example/tickets/${input.ticketId}`,
      { signal: context.signal },
    );

    return response.json();
  },
});

const call = (id: string, name: string, args: unknown) => ({
  toolCalls: [{ id, name, arguments: JSON.stringify(args) }],
});

test("define: the model's call fetches the ticket; bad arguments never reach it", async () => {
  const agent = createAgent({ id: "support", tools: [fetchTicket] });
  const result = await agent.run({
    input: "What is T-7 about?",
    client: createScriptedClient([call("c1", "fetch-ticket", { ticketId: "T-7" }), { text: "open" }]),
  });
  assert.equal(result.run.status, "completed");
  assert.deepEqual(tickets, ["https://internal.example/tickets/T-7"]);
  assert.deepEqual(result.stepResults[0].toolResults[0].result, { id: "T-7", status: "open" });
  const bad = await agent.run({
    input: "x",
    client: createScriptedClient([call("c1", "fetch-ticket", { ticket: 7 })]),
    toolExecution: { onError: "return-to-model" },
  }).catch((e) => e.result ?? e);
  assert.match(String(bad.stepResults?.[0]?.toolResults?.[0]?.error ?? bad.message), /Invalid tool input/);
  assert.equal(tickets.length, 1);
});

test("approval: production deploys pause for a person, others run", async () => {
  const deployed: string[] = [];
  const deployRelease = async (input: { environment: string }) => {
    deployed.push(input.environment);
    return { deployed: input.environment };
  };
  const deploy = defineTool({
    id: "deploy",
    description: "Deploy the selected release",
    requireApproval: (input: { environment: string }) => input.environment === "production",
    execute: deployRelease,
  });
  const agent = createAgent({ id: "ops", tools: [deploy] });
  const staging = await agent.run({
    input: "ship",
    client: createScriptedClient([call("c1", "deploy", { environment: "staging" }), { text: "done" }]),
  });
  assert.equal(staging.run.status, "completed");
  const production = await agent.run({
    input: "ship",
    client: createScriptedClient([call("c1", "deploy", { environment: "production" })]),
  });
  assert.equal(production.run.status, "waiting_for_human");
  assert.deepEqual(deployed, ["staging"]);
  const approved = await agent.continueRun({
    state: production,
    approvals: ["c1"],
    client: createScriptedClient([{ text: "shipped" }]),
  });
  assert.equal(approved.run.status, "completed");
  assert.deepEqual(deployed, ["staging", "production"]);
});

test("progress: yields become preliminary results, setContext replaces the context", async () => {
  const indexRepository = defineTool({
    id: "index-repository",
    async *execute(input: { path: string }, context) {
      yield { phase: "scan" };
      yield { phase: "embed" };
      context.setContext({ indexed: true });
      return { indexed: 248 };
    },
  });
  const agent = createAgent({ id: "indexer", tools: [indexRepository] });
  const result = await agent.run({
    input: "index",
    context: { indexed: false },
    client: createScriptedClient([call("c1", "index-repository", { path: "." }), { text: "ok" }]),
  });
  const toolResult = result.stepResults[0].toolResults[0];
  assert.deepEqual(toolResult.preliminaryResults, [{ phase: "scan" }, { phase: "embed" }]);
  assert.deepEqual(toolResult.result, { indexed: 248 });
  assert.deepEqual(result.run.context, { indexed: true });
});

test("progress without context: the same yields and result", async () => {
  const indexRepository = defineTool({
    id: "index-repository",
    async *execute(input: { path: string }) {
      yield { phase: "scan" };
      yield { phase: "embed" };
      return { indexed: 248 };
    },
  });
  const agent = createAgent({ id: "indexer", tools: [indexRepository] });
  const result = await agent.run({
    input: "index",
    client: createScriptedClient([call("c1", "index-repository", { path: "." }), { text: "ok" }]),
  });
  assert.deepEqual(result.stepResults[0].toolResults[0].preliminaryResults, [{ phase: "scan" }, { phase: "embed" }]);
});

test("concurrency: at most three of a turn's calls run at once", async () => {
  let running = 0;
  let most = 0;
  const slow = (id: string) => defineTool({
    id,
    async execute() {
      running += 1;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 200));
      running -= 1;
      return id;
    },
  });
  const [fetchDocs, fetchStatus, fetchIncidents] = [slow("docs"), slow("status"), slow("incidents")];
  const agent = createAgent({
    id: "research-agent",
    toolExecution: {
      toolConcurrency: 3,
    },
    tools: [fetchDocs, fetchStatus, fetchIncidents],
  });
  const calls = { toolCalls: ["docs", "status", "incidents", "docs"].map((name, i) => ({ id: `c${i}`, name, arguments: "{}" })) };
  const result = await agent.run({ input: "research", client: createScriptedClient([calls, { text: "ok" }]) });
  assert.equal(result.run.status, "completed");
  assert.equal(most, 3);
});
