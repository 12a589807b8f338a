// Run stores (docs/behaviour.md §10) from Node, against SQLite and a real PostgreSQL: round trip,
// continue by id (here and from another process), at most once across 8 racing processes,
// recovery after a SIGKILLed worker, the approval inbox listing, prune, the product's
// {load, save} accessor, and the error classes.
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  AgentContinueError, AgentStoreError, createAgent, createInMemoryRunStore, createPostgresRunStore,
  createScriptedClient, createSqliteRunStore, defineTool,
} from '../index.mjs';
import { call, calls, sleep } from './helpers.mjs';

const WORKER = fileURLToPath(new URL('../test-fixtures/store-worker.mjs', import.meta.url));
const PG_SERVER = fileURLToPath(new URL('../../scripts/pg-test-server.sh', import.meta.url));

function postgresUrl() {
  const url = process.env.PHASEO_TEST_POSTGRES_URL;
  if (!url) {
    assert.fail('PHASEO_TEST_POSTGRES_URL is not set: run the store tests under scripts/with-test-postgres.sh '
      + '(e.g. scripts/with-test-postgres.sh make node-tests); a PostgreSQL test never skips');
  }
  return url;
}

/**
 * The spec of a store only this test writes to. The suites' concurrent tests share one
 * PostgreSQL database, and a test that prunes every completed run would delete the runs
 * another test is still racing to continue; it gets an empty database instead.
 */
function databaseOfItsOwn(spec) {
  if (spec.startsWith('sqlite:')) return spec; // already a file of this test's own
  const out = execFileSync('bash', [PG_SERVER, 'database'], { encoding: 'utf8', timeout: 60_000 });
  return out.trim().split('\n').at(-1);
}

const openStore = async (spec) => (spec.startsWith('sqlite:') ? createSqliteRunStore(spec.slice(7)) : createPostgresRunStore(spec));

function tempDir() {
  return mkdtempSync(join(tmpdir(), 'phaseo-store-'));
}

/** A fresh execution log for the workers; returns its path. */
function execLog() {
  const log = join(tempDir(), 'executions.log');
  writeFileSync(log, '');
  return log;
}

const executions = (log) => readFileSync(log, 'utf8').split('\n').filter(Boolean);

function worker(spec, log, ...args) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [WORKER, spec, ...args], { env: { ...process.env, PHASEO_EXEC_LOG: log }, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error) { reject(new Error(`worker failed: ${error.message}\n${stderr}`)); return; }
        resolve(JSON.parse(stdout.trim().split('\n').at(-1)));
      });
  });
}

function deployAgent(store, ran, id = 'store-worker') {
  const deploy = defineTool({ id: 'deploy', requireApproval: true, execute: () => { ran?.push('ran'); return 'deployed'; } });
  return createAgent({ id, tools: [deploy], ...(store ? { store } : {}) });
}

async function pause(agent, extra = {}) {
  const result = await agent.run({ input: 'deploy', client: createScriptedClient([calls(call('c1', 'deploy'))]), ...extra });
  assert.equal(result.run.status, 'waiting_for_human');
  return result;
}

for (const backend of ['sqlite', 'postgres']) {
  const spec = () => (backend === 'sqlite' ? `sqlite:${join(tempDir(), 'runs.db')}` : postgresUrl());

  describe(`run store: ${backend}`, () => {
    test('save and load round trip', async () => {
      const store = await openStore(spec());
      const paused = await pause(deployAgent(store));
      const stored = await store.load(paused.run.id);
      assert.equal(stored.runId, paused.run.id);
      assert.equal(stored.status, 'waiting_for_human');
      assert.equal(stored.pauseId, paused.run.pause.id);
      assert.equal(JSON.stringify(stored.state), JSON.stringify(paused));
      assert.deepEqual(stored.pending.map((p) => p.call.id), ['c1']);
      assert.equal(await store.load(randomUUID()), null);
    });

    test('continue by id in process; a second continue is refused', async () => {
      const store = await openStore(spec());
      const ran = [];
      const agent = deployAgent(store, ran);
      const paused = await pause(agent);
      const done = await agent.continueRun({ runId: paused.run.id, client: createScriptedClient([{ text: 'done' }]), approvals: ['c1'] });
      assert.equal(done.run.status, 'completed');
      assert.equal(done.output, 'done');
      assert.deepEqual(ran, ['ran']);
      assert.equal((await store.load(paused.run.id)).status, 'completed');
      await assert.rejects(
        agent.continueRun({ runId: paused.run.id, client: createScriptedClient([{ text: 'again' }]), approvals: ['c1'] }),
        (e) => e instanceof AgentContinueError && e.message === `Pause ${paused.run.pause.id} of run ${paused.run.id} was already continued`);
      assert.deepEqual(ran, ['ran']);
    });

    test('per-run store and a streamed continue by id', async () => {
      const store = await openStore(spec());
      const agent = deployAgent(null);
      const paused = await pause(agent, { store });
      const stream = agent.continueStream({ runId: paused.run.id, store, client: createScriptedClient([{ text: 'ok' }]), approvals: ['c1'] });
      const result = await stream;
      assert.equal(result.run.status, 'completed');
    });

    test('a pause continued from another process', async () => {
      const s = spec();
      const log = execLog();
      const paused = await worker(s, log, 'pause');
      assert.equal(paused.status, 'waiting_for_human');
      const done = await worker(s, log, 'continue', paused.run_id);
      assert.deepEqual(done, { run_id: paused.run_id, status: 'completed', output: 'done' });
      assert.equal(executions(log).length, 1);
      assert.equal((await (await openStore(s)).load(paused.run_id)).status, 'completed');
    });

    test('8 processes race to continue one pause: exactly one proceeds', async () => {
      const s = spec();
      const log = execLog();
      const store = await openStore(s);
      const paused = await pause(deployAgent(store));
      const answers = await Promise.all(Array.from({ length: 8 }, () => worker(s, log, 'continue', paused.run.id)));
      const winners = answers.filter((a) => a.status === 'completed');
      const losers = answers.filter((a) => a.error !== undefined);
      assert.equal(winners.length, 1, JSON.stringify(answers));
      assert.equal(losers.length, 7, JSON.stringify(answers));
      const message = `Pause ${paused.run.pause.id} of run ${paused.run.id} was already continued`;
      for (const l of losers) assert.deepEqual(l, { error: 'continue_invalid', message });
      assert.equal(executions(log).length, 1);
    });

    test('a worker SIGKILLed after its claim is recovered by another process', async () => {
      const s = spec();
      const log = execLog();
      const paused = await worker(s, log, 'pause');
      const hung = spawn(process.execPath, [WORKER, s, 'continue', paused.run_id, '--hang'],
        { env: { ...process.env, PHASEO_EXEC_LOG: log }, stdio: ['ignore', 'pipe', 'inherit'] });
      const first = await new Promise((resolve, reject) => {
        let text = '';
        hung.stdout.on('data', (chunk) => {
          text += chunk;
          if (text.includes('\n')) resolve(JSON.parse(text.split('\n')[0]));
        });
        hung.on('exit', (code) => reject(new Error(`worker exited early (${code})`)));
      });
      assert.deepEqual(first, { executing: true });
      const exited = new Promise((resolve) => hung.once('exit', resolve));
      hung.kill('SIGKILL');
      await exited;
      const store = await openStore(s);
      assert.equal((await store.load(paused.run_id)).status, 'running');
      // The dead worker's lease (1 s) must expire before anyone may take the run over. Checked
      // from this process: starting another can take longer than the lease on a busy machine.
      const rescuer = createAgent({ id: 'store-worker', store });
      await assert.rejects(
        rescuer.recover(paused.run_id, { client: createScriptedClient([{ text: 'done' }]) }),
        (e) => e instanceof AgentContinueError && e.code === 'continue_invalid',
      );
      assert.equal(executions(log).length, 1);
      await sleep(1300);
      const done = await worker(s, log, 'recover', paused.run_id);
      assert.deepEqual(done, { run_id: paused.run_id, status: 'completed', output: 'done' });
      assert.equal(executions(log).length, 2);
      assert.equal((await store.load(paused.run_id)).status, 'completed');
    });

    test('a worker whose lease was taken over gets lease_lost', async () => {
      const s = spec();
      const log = execLog();
      const paused = await worker(s, log, 'pause');
      const slow = spawn(process.execPath, [WORKER, s, 'continue', paused.run_id, '--slow'],
        { env: { ...process.env, PHASEO_EXEC_LOG: log }, stdio: ['ignore', 'pipe', 'inherit'] });
      let text = '';
      const exited = new Promise((resolve) => slow.once('exit', resolve));
      await new Promise((resolve) => {
        slow.stdout.on('data', (chunk) => {
          text += chunk;
          if (text.includes('\n')) resolve();
        });
      });
      assert.deepEqual(JSON.parse(text.split('\n')[0]), { executing: true });
      // Frozen past its 1 s lease, the worker cannot renew it: another process recovers the run.
      slow.kill('SIGSTOP');
      let done;
      try {
        await sleep(1300);
        done = await worker(s, log, 'recover', paused.run_id);
      } finally {
        slow.kill('SIGCONT');
      }
      assert.equal(done.status, 'completed', JSON.stringify(done));
      assert.equal(await exited, 0);
      const answer = JSON.parse(text.trim().split('\n').at(-1));
      assert.deepEqual(answer, { error: 'lease_lost', message: `Run ${paused.run_id} was taken over by another worker (lease lost)` });
      assert.equal((await (await openStore(s)).load(paused.run_id)).status, 'completed');
    });

    test('the approval inbox pages; prune and delete', async () => {
      const store = await openStore(databaseOfItsOwn(spec()));
      const agentId = `inbox-${randomUUID()}`;
      const agent = deployAgent(store, null, agentId);
      const paused = [];
      for (let i = 0; i < 5; i += 1) paused.push((await pause(agent)).run.id);
      const done = await agent.run({ input: 'hi', client: createScriptedClient([{ text: 'hello' }]) });
      const seen = [];
      let cursor;
      let pages = 0;
      do {
        const page = await store.list({ status: 'waiting_for_human', agentId, limit: 2, cursor });
        pages += 1;
        assert.ok(page.runs.length <= 2);
        for (const run of page.runs) {
          assert.equal(run.status, 'waiting_for_human');
          assert.deepEqual(run.pending.map((p) => p.call.id), ['c1']);
        }
        seen.push(...page.runs.map((r) => r.runId));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      assert.equal(pages, 3);
      assert.deepEqual([...seen].sort(), [...paused].sort());
      const every = await store.list({ agentId });
      assert.deepEqual(new Set(every.runs.map((r) => r.runId)), new Set([...paused, done.run.id]));
      assert.equal(await store.prune(['completed'], { olderThan: -60_000 }), 1);
      assert.equal(await store.load(done.run.id), null);
      assert.ok(await store.load(paused[0]));
      assert.equal(await store.delete(paused[0]), true);
      assert.equal(await store.delete(paused[0]), false);
      assert.equal((await store.list({ status: ['waiting_for_human'], agentId })).runs.length, 4);
    });
  });
}

test('an unknown status and a bad cursor are clear store errors', async () => {
  const store = createInMemoryRunStore();
  await assert.rejects(store.list({ status: 'paused' }), (e) => e instanceof AgentStoreError && /unknown run status 'paused'/.test(e.message));
  await assert.rejects(store.list({ cursor: 'nonsense' }), (e) => e instanceof AgentStoreError && /invalid list cursor/.test(e.message));
});

test('an unreachable PostgreSQL is a store error', async () => {
  await assert.rejects(createPostgresRunStore('postgres://nobody@127.0.0.1:1/none?connect_timeout=2'), (e) => e instanceof AgentStoreError);
});

test("the product's {load, save} accessor works as state and as store", async () => {
  const saved = new Map();
  const accessor = { load: (id) => saved.get(id) ?? null, save: (state) => { saved.set(state.run.id, state); } };
  const agent = deployAgent(null);
  const paused = await pause(agent, { state: accessor });
  assert.equal(saved.get(paused.run.id).run.status, 'waiting_for_human');
  const done = await agent.continueRun({ runId: paused.run.id, state: accessor, client: createScriptedClient([{ text: 'ok' }]), approvals: ['c1'] });
  assert.equal(done.run.status, 'completed');
  assert.equal(saved.get(paused.run.id).run.status, 'completed');

  const asyncSaved = new Map();
  const asyncAccessor = {
    load: async (id) => (asyncSaved.has(id) ? JSON.stringify(asyncSaved.get(id)) : null),
    save: async (state) => { asyncSaved.set(state.run.id, state); },
  };
  const storeAgent = deployAgent(asyncAccessor);
  const p = await pause(storeAgent);
  const r = await storeAgent.continueRun({ runId: p.run.id, client: createScriptedClient([{ text: 'ok' }]), approvals: ['c1'] });
  assert.equal(r.run.status, 'completed');
});

test('a failing accessor is a store error with the result attached', async () => {
  const broken = { load: () => null, save: () => { throw new Error('disk full'); } };
  await assert.rejects(deployAgent(null).run({ input: 'x', client: createScriptedClient([{ text: 'hi' }]), state: broken }),
    (e) => e instanceof AgentStoreError && /disk full/.test(e.message) && e.result !== undefined);
});

test('a bad store option is refused by name', async () => {
  assert.throws(() => createAgent({ id: 'x', store: 'runs.db' }), /store must be a run store/);
  await assert.rejects(deployAgent(null).continueRun({ runId: 'r', client: createScriptedClient([]) }),
    (e) => e instanceof AgentContinueError && /needs a run store/.test(e.message));
});

test('a state and a runId must agree', async () => {
  const agent = deployAgent(createSqliteRunStore(join(tempDir(), 'runs.db')));
  const first = await pause(agent);
  const second = await pause(agent);
  await assert.rejects(agent.continueRun({ state: first, runId: second.run.id, client: createScriptedClient([]), approvals: ['c1'] }),
    (e) => e instanceof AgentContinueError && e.message === `The state given is of run ${first.run.id}, not of run ${second.run.id}`);
  const done = await agent.continueRun({ state: first, runId: first.run.id, client: createScriptedClient([{ text: 'ok' }]), approvals: ['c1'] });
  assert.equal(done.run.status, 'completed');
});
