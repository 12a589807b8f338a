// An approval inbox on a SQLite run store, across two processes.
//
//   node examples/node/approval-inbox.mjs            # runs both steps
//   node examples/node/approval-inbox.mjs agent DB   # step 1: a run pauses for approval
//   node examples/node/approval-inbox.mjs inbox DB   # step 2: list, decide, continue by id
//
// Step 1 is the agent process: a refund above 100 needs a person, so each run pauses and
// the process ends — the states are in the store. Step 2 is another process (the approval
// desk): it lists the waiting runs with their pending calls and decides each by run id. The
// desk caps refunds at 200: a larger one is approved with the amount edited down (the edited
// input is checked against the tool's schema before the tool runs), and one it would rather
// settle with store credit is answered in the tool's place (the tool never runs).
// Continuing is at most once: a second desk approving the same pause is told
// `Pause <pauseId> of run <runId> was already continued`.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentContinueError, createAgent, createScriptedClient, createSqliteRunStore, defineTool } from '../../bindings-node/index.mjs';

function makeAgent(db) {
  const refund = defineTool({
    id: 'refund',
    description: 'Refunds an order',
    inputSchema: { type: 'object', properties: { order: { type: 'string' }, amount: { type: 'number' } }, required: ['order', 'amount'] },
    requireApproval: (args) => args.amount > 100,
    execute: (args) => `refunded ${args.amount} to order ${args.order}`,
  });
  return createAgent({ id: 'support-desk', tools: [refund], store: createSqliteRunStore(db) });
}

async function agentProcess(db) {
  // A scripted model stands in for a real one (see the README for real clients).
  const agent = makeAgent(db);
  for (const [order, amount] of [['A-17', 240], ['B-4', 130]]) {
    const model = createScriptedClient([{ toolCalls: [{ id: 'c1', name: 'refund', arguments: JSON.stringify({ order, amount }) }] }]);
    const result = await agent.run({ input: `Order ${order} arrived broken, please refund it.`, client: model });
    console.log(`[agent] run for ${order} is ${result.run.status}`);
  }
  console.log('[agent] the process ends here');
}

async function inboxProcess(db) {
  const store = createSqliteRunStore(db);
  const agent = makeAgent(db);
  const { runs } = await store.list({ status: 'waiting_for_human' });
  for (const run of runs) {
    const { call } = run.pending[0];
    const { order, amount } = call.input;
    let decision;
    if (amount > 200) {
      console.log(`[inbox] ${order}: refund ${amount} — approved, capped at 200`);
      decision = { approvals: [{ toolCallId: call.id, editedInput: { order, amount: 200 } }] };
    } else {
      console.log(`[inbox] ${order}: refund ${amount} — answered with store credit instead`);
      decision = { responses: [{ toolCallId: call.id, output: `store credit of ${amount} for order ${order}` }] };
    }
    const reply = createScriptedClient([{ text: "Done: see the desk's decision." }]);
    const done = await agent.continueRun({ runId: run.runId, client: reply, ...decision });
    const toolMessage = done.run.messages.find((m) => m.role === 'tool');
    console.log(`[inbox] ${order} is ${done.run.status}; the model read: ${toolMessage.content}`);
    try {
      await agent.continueRun({ runId: run.runId, approvals: [call.id], client: createScriptedClient([{ text: 'again' }]) });
    } catch (error) {
      if (!(error instanceof AgentContinueError)) throw error;
      console.log(`[inbox] a second decision is refused: ${error.message}`);
    }
  }
}

const [step, db] = process.argv.slice(2);
if (step === 'agent') await agentProcess(db);
else if (step === 'inbox') await inboxProcess(db);
else {
  const dir = mkdtempSync(join(tmpdir(), 'phaseo-inbox-'));
  try {
    for (const s of ['agent', 'inbox']) execFileSync(process.execPath, [fileURLToPath(import.meta.url), s, join(dir, 'runs.db')], { stdio: 'inherit' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
