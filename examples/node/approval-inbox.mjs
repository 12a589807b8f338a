// An approval inbox on a SQLite run store, across two processes.
//
//   node examples/node/approval-inbox.mjs            # runs both steps
//   node examples/node/approval-inbox.mjs agent DB   # step 1: a run pauses for approval
//   node examples/node/approval-inbox.mjs inbox DB   # step 2: list, approve, continue by id
//
// Step 1 is the agent process: a refund above 100 needs a person, so the run pauses and
// the process ends — the state is in the store. Step 2 is another process (the approval
// desk): it lists the waiting runs with their pending calls, approves, and continues each
// by run id. Continuing is at most once: a second desk approving the same pause is told
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
  const model = createScriptedClient([{ toolCalls: [{ id: 'c1', name: 'refund', arguments: '{"order": "A-17", "amount": 240}' }] }]);
  const result = await makeAgent(db).run({ input: 'Order A-17 arrived broken, please refund it.', client: model });
  console.log(`[agent] run ${result.run.id.slice(0, 8)} is ${result.run.status}; the process ends here`);
}

async function inboxProcess(db) {
  const store = createSqliteRunStore(db);
  const agent = makeAgent(db);
  const { runs } = await store.list({ status: 'waiting_for_human' });
  for (const run of runs) {
    for (const p of run.pending) console.log(`[inbox] run ${run.runId.slice(0, 8)}: ${p.call.name} ${JSON.stringify(p.call.input)} — approving`);
    const done = await agent.continueRun({
      runId: run.runId, approvals: run.pending.map((p) => p.call.id), client: createScriptedClient([{ text: 'Your refund is on its way.' }]),
    });
    console.log(`[inbox] run ${run.runId.slice(0, 8)} is ${done.run.status}: ${done.output}`);
    try {
      await agent.continueRun({ runId: run.runId, approvals: ['c1'], client: createScriptedClient([{ text: 'again' }]) });
    } catch (error) {
      if (!(error instanceof AgentContinueError)) throw error;
      console.log(`[inbox] a second approval is refused: ${error.message}`);
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
