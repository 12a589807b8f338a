// Run stores (docs/behaviour.md §10) when the database misbehaves, from Node: a PostgreSQL stopped
// mid-run fails the run with store_failed (its result attached) and the run is recovered
// once the server is back; a corrupted row and a schema newer than the SDK are clear errors
// naming what is wrong, and lose nothing else.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  AgentError, AgentStateError, AgentStoreError, createAgent, createPostgresRunStore, createScriptedClient,
  createSqliteRunStore, defineTool,
} from '../index.mjs';
import { call, calls, sleep } from './helpers.mjs';

const PG_SCRIPT = fileURLToPath(new URL('../../scripts/pg-test-server.sh', import.meta.url));
const tooNew = (version) => `Run store failed: the database schema is version 99, newer than this SDK supports (${version}); upgrade the SDK`;

function postgresUrl() {
  const url = process.env.PHASEO_TEST_POSTGRES_URL;
  if (!url) {
    assert.fail('PHASEO_TEST_POSTGRES_URL is not set: run the store tests under scripts/with-test-postgres.sh; '
      + 'a PostgreSQL test never skips');
  }
  return url;
}

/** Runs scripts/pg-test-server.sh COMMAND for the cluster in `dir`; its stdout. */
function pgScript(dir, command) {
  return new Promise((resolve, reject) => {
    execFile(PG_SCRIPT, [command], { env: { ...process.env, PHASEO_PG_DIR: dir }, timeout: 120_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command}: ${error.message}\n${stderr}`)); else resolve(stdout);
    });
  });
}

/** Runs one SQL statement with `args` on the SQLite file at `path` (Python's sqlite3). */
function sqlite(path, statement, ...args) {
  return execFileSync('python3', ['-c', 'import sqlite3, sys\nc = sqlite3.connect(sys.argv[1])\n'
    + 'rows = c.execute(sys.argv[2], sys.argv[3:]).fetchall()\nc.commit()\nprint(repr(rows))', path, statement, ...args],
  { encoding: 'utf8' }).trim();
}

const psql = (url, statement) => execFileSync('psql', [url, '-v', 'ON_ERROR_STOP=1', '-q', '-c', statement], { encoding: 'utf8' });

const lease = { durationMs: 300, renewEveryMs: 50 };

test('a stopped PostgreSQL fails the run with its result; after a restart the run is recovered', async () => {
  postgresUrl(); // this test needs what the shared server needs, and fails the same way without it
  // A cluster of this test alone, outside the root-only temp folders (it runs as postgres under root).
  const dir = `/tmp/phaseo-pg-node-${randomUUID()}`;
  try {
    const url = (await pgScript(dir, 'start')).trim().replace('export PHASEO_TEST_POSTGRES_URL=', '');
    const store = await createPostgresRunStore(url);
    const halt = defineTool({ id: 'halt', execute: async () => { await pgScript(dir, 'halt'); return 'halted'; } });
    const agent = createAgent({ id: 'halter', tools: [halt], store, lease });
    let failed;
    await assert.rejects(
      agent.run({ input: 'go', client: createScriptedClient([calls(call('h', 'halt')), { text: 'never' }]) }),
      (e) => { failed = e; return e instanceof AgentStoreError; },
    );
    assert.equal(failed.code, 'store_failed');
    assert.match(failed.message, /^Run store failed:/);
    assert.ok(failed.result, 'the result is attached');
    assert.equal(failed.result.run.status, 'failed');
    assert.equal(failed.result.stepResults[0].toolResults[0].toolCallId, 'h');
    const runId = failed.result.run.id;

    await pgScript(dir, 'resume');
    await sleep(400); // past the dead worker's lease
    const noop = defineTool({ id: 'halt', execute: () => 'halted' });
    const rescuer = createAgent({ id: 'halter', tools: [noop], store, lease });
    const done = await rescuer.recover(runId, { client: createScriptedClient([calls(call('h', 'halt')), { text: 'done' }]) });
    assert.equal(done.run.status, 'completed');
    assert.equal(done.output, 'done');
    assert.equal((await store.load(runId)).status, 'completed');
  } finally {
    await pgScript(dir, 'stop');
  }
});

function deployAgent(store) {
  const deploy = defineTool({ id: 'deploy', requireApproval: true, execute: () => 'deployed' });
  return createAgent({ id: 'store-corrupt', tools: [deploy], store });
}

async function pause(agent) {
  const result = await agent.run({ input: 'deploy', client: createScriptedClient([calls(call('c1', 'deploy'))]) });
  assert.equal(result.run.status, 'waiting_for_human');
  return result;
}

const freshFile = () => join(mkdtempSync(join(tmpdir(), 'phaseo-store-')), 'runs.db');

test('a corrupted state names the run and loses nothing', async () => {
  const path = freshFile();
  const store = createSqliteRunStore(path);
  const agent = deployAgent(store);
  const broken = await pause(agent);
  const intact = await pause(agent);
  sqlite(path, 'UPDATE phaseo_runs SET state = \'{"run": 42}\' WHERE run_id = ?', broken.run.id);
  await assert.rejects(store.load(broken.run.id), (e) => e instanceof AgentStateError && e.code === 'state_invalid'
    && e.message.startsWith(`Stored state of run ${broken.run.id} is invalid:`));
  await assert.rejects(
    agent.continueRun({ runId: broken.run.id, client: createScriptedClient([{ text: 'no' }]), approvals: ['c1'] }),
    (e) => e instanceof AgentError && e.message.includes(broken.run.id),
  );
  // The refused continue claimed nothing: the row is as the corruption left it.
  assert.equal(sqlite(path, 'SELECT status, state FROM phaseo_runs WHERE run_id = ?', broken.run.id),
    "[('waiting_for_human', '{\"run\": 42}')]");
  const done = await agent.continueRun({ runId: intact.run.id, client: createScriptedClient([{ text: 'ok' }]), approvals: ['c1'] });
  assert.equal(done.run.status, 'completed');
});

test('a corrupted column is a store error naming the run', async () => {
  const path = freshFile();
  const store = createSqliteRunStore(path);
  const paused = await pause(deployAgent(store));
  sqlite(path, "UPDATE phaseo_runs SET version = 'not a number' WHERE run_id = ?", paused.run.id);
  await assert.rejects(store.load(paused.run.id), (e) => e instanceof AgentStoreError && e.code === 'store_failed'
    && e.message.startsWith(`Run store failed: the row of run ${paused.run.id} cannot be read:`));
});

/** The schema version the SDK writes, read back from a fresh file rather than hard-coded. */
function schemaVersion() {
  const path = freshFile();
  createSqliteRunStore(path);
  return Number(/\[\((\d+),\)\]/.exec(sqlite(path, 'SELECT version FROM phaseo_schema_version'))[1]);
}

test('a newer SQLite schema is refused and nothing is lost', async () => {
  const path = freshFile();
  const paused = await pause(deployAgent(createSqliteRunStore(path)));
  sqlite(path, 'UPDATE phaseo_schema_version SET version = 99');
  assert.throws(() => createSqliteRunStore(path), (e) => e instanceof AgentStoreError && e.message === tooNew(schemaVersion()));
  assert.equal(sqlite(path, 'SELECT COUNT(*) FROM phaseo_runs WHERE run_id = ?', paused.run.id), '[(1,)]');
});

test('a newer PostgreSQL schema is refused', async () => {
  const shared = postgresUrl();
  const db = `schema_${randomUUID().replaceAll('-', '')}`;
  psql(shared, `CREATE DATABASE ${db}`);
  const url = `${shared.slice(0, shared.lastIndexOf('/'))}/${db}`;
  await createPostgresRunStore(url);
  psql(url, 'UPDATE phaseo_schema_version SET version = 99');
  await assert.rejects(createPostgresRunStore(url), (e) => e instanceof AgentStoreError && e.message === tooNew(schemaVersion()));
});
