// A worker process of the run-store tests (and of tests/store-handoff): pauses a run,
// continues one by id, or recovers one, against the store named on the command line, and
// prints one JSON line. The same agent as bindings-python/tests/store_worker.py.
//
//   node store-worker.mjs STORE pause
//   node store-worker.mjs STORE continue RUN_ID [--hang | --slow]
//   node store-worker.mjs STORE recover RUN_ID
//
// STORE is `sqlite:<path>` or a PostgreSQL URL. Every execution of the `deploy` tool
// appends a line to the file $PHASEO_EXEC_LOG; with --hang the tool then never returns
// (the test SIGKILLs the worker after its claim); with --slow it returns after 2 s (the
// test freezes the worker meanwhile, so that its lease is taken over).
import { appendFileSync } from 'node:fs';
import {
  AgentError, createAgent, createPostgresRunStore, createScriptedClient, createSqliteRunStore, defineTool,
} from '../index.mjs';

const [spec, mode, runId] = process.argv.slice(2);
const hang = process.argv.includes('--hang');
const slow = process.argv.includes('--slow');
const store = spec.startsWith('sqlite:') ? createSqliteRunStore(spec.slice('sqlite:'.length)) : await createPostgresRunStore(spec);

const deploy = defineTool({
  id: 'deploy',
  requireApproval: true,
  execute: () => {
    appendFileSync(process.env.PHASEO_EXEC_LOG, `${process.pid}\n`);
    if (hang) {
      process.stdout.write(`${JSON.stringify({ executing: true })}\n`);
      return new Promise(() => {});
    }
    if (slow) {
      process.stdout.write(`${JSON.stringify({ executing: true })}\n`);
      return new Promise((resolve) => { setTimeout(() => resolve('deployed'), 2000); });
    }
    return 'deployed';
  },
});
const agent = createAgent({ id: 'store-worker', tools: [deploy], store, lease: { durationMs: 1000, renewEveryMs: 250 } });

try {
  let result;
  if (mode === 'pause') {
    const c1 = { id: 'c1', name: 'deploy', arguments: '{}' };
    result = await agent.run({ input: 'deploy please', client: createScriptedClient([{ toolCalls: [c1] }]) });
  } else if (mode === 'continue') {
    result = await agent.continueRun({ runId, client: createScriptedClient([{ text: 'done' }]), approvals: ['c1'] });
  } else if (mode === 'recover') {
    result = await agent.recover(runId, { client: createScriptedClient([{ text: 'done' }]) });
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
  process.stdout.write(`${JSON.stringify({ run_id: result.run.id, status: result.run.status, output: result.output })}\n`);
} catch (error) {
  if (!(error instanceof AgentError)) throw error;
  process.stdout.write(`${JSON.stringify({ error: error.code, message: error.message })}\n`);
}
