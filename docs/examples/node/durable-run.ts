import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AgentError, createAgent, createScriptedClient, createSqliteRunStore, defineTool } from "@phaseo/agent-sdk";
import type { RunStore } from "@phaseo/agent-sdk";

const refund = defineTool({
  id: "refund",
  description: "Refund an order",
  parameters: {
    type: "object",
    properties: { order: { type: "string" }, amount: { type: "number" } },
    required: ["order", "amount"],
  },
  requireApproval: true,
  async execute(input: { order: string; amount: number }) {
    return { refunded: input.amount };
  },
});
// Every worker builds the same agent over the same store (another process, another day).
const supportDesk = (store: RunStore) => createAgent({ id: "support-desk", tools: [refund], store });

const client = createScriptedClient([
  { toolCalls: [{ id: "c1", name: "refund", arguments: '{"order": "A-17", "amount": 42}' }] },
  { text: "Refunded 42 on order A-17." },
]);
const path = join(mkdtempSync(join(tmpdir(), "phaseo-")), "runs.db");

// The chat worker: the run pauses on the refund; its state is saved in the store.
const paused = await supportDesk(createSqliteRunStore(path)).run({ input: "Refund order A-17", client });
console.log(`run status: ${paused.run.status}`);

// The approval desk, later: its inbox lists the waiting runs; it continues one by run id.
const store = createSqliteRunStore(path);
for (const run of (await store.list({ status: "waiting_for_human" })).runs) {
  for (const { call } of run.pending) {
    const input = call.input as { order: string; amount: number };
    console.log(`inbox: ${call.name} ${input.order} ${input.amount}`);
  }
  const done = await supportDesk(store).continueRun({ runId: run.runId, client, approvals: ["c1"] });
  console.log(done.output);
  console.log(`stored status: ${(await store.load(run.runId))?.status}`);
  // Any other continue of that pause, by any worker, is refused: the refund ran once.
  try {
    await supportDesk(store).continueRun({ runId: run.runId, client, approvals: ["c1"] });
  } catch (error) {
    if (!(error instanceof AgentError)) throw error;
    console.log(`again: ${error.code}`);
  }
}
