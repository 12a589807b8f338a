"""Run stores (docs/behaviour.md §10) when the database misbehaves, from Python: a PostgreSQL stopped
mid-run fails the run with ``store_failed`` (its result attached) and the run is recovered
once the server is back; a corrupted row and a schema newer than the SDK are clear errors
naming what is wrong, and lose nothing else."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any, Dict, Iterator

import pytest

from phaseo_agent import (AgentError, AgentStateError, AgentStoreError, AgentTool, PostgresRunStore, RunResult,
                          ScriptedClient, SqliteRunStore, create_agent, define_tool)

from conftest import call, calls

PG_SCRIPT = str(Path(__file__).resolve().parents[2] / "scripts" / "pg-test-server.sh")
SCHEMA_TOO_NEW = "Run store failed: the database schema is version 99, newer than this SDK supports ({})"


def postgres_url() -> str:
    url = os.environ.get("PHASEO_TEST_POSTGRES_URL")
    if not url:
        pytest.fail("PHASEO_TEST_POSTGRES_URL is not set: run the store tests under scripts/with-test-postgres.sh; "
                    "a PostgreSQL test never skips")
    return url


class OwnServer:
    """A PostgreSQL cluster of one test alone (stopped and restarted mid-test), made by
    scripts/pg-test-server.sh in a folder of its own."""

    def __init__(self) -> None:
        # Not under pytest's tmp_path: that folder is private to root, and the server runs as
        # the postgres user when the tests run as root.
        self.dir = f"/tmp/phaseo-pg-py-{uuid.uuid4()}"

    def script(self, command: str) -> str:
        out = subprocess.run([PG_SCRIPT, command], env={**os.environ, "PHASEO_PG_DIR": self.dir},
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, f"{command}: {out.stderr}"
        return out.stdout

    def start(self) -> str:
        return self.script("start").strip().replace("export PHASEO_TEST_POSTGRES_URL=", "")


@pytest.fixture
def own_server() -> Iterator[OwnServer]:
    postgres_url()  # this test needs what the shared server needs, and fails the same way without it
    server = OwnServer()
    try:
        yield server
    finally:
        server.script("stop")


def lease() -> Dict[str, int]:
    return {"duration_ms": 300, "renew_every_ms": 50}


def test_a_stopped_postgres_fails_the_run_with_its_result_and_it_recovers_after_restart(own_server: OwnServer) -> None:
    store = PostgresRunStore(own_server.start())

    def halt(_i: Dict[str, Any], _rt: Any) -> str:
        own_server.script("halt")
        return "halted"

    agent = create_agent(id="halter", tools=[define_tool(AgentTool(id="halt", execute=halt))], store=store,
                         lease=lease())
    with pytest.raises(AgentStoreError) as failed:
        agent.run(input="go", client=ScriptedClient([calls(call("h", "halt")), {"text": "never"}]))
    assert failed.value.code == "store_failed"
    assert str(failed.value).startswith("Run store failed:"), str(failed.value)
    result = failed.value.result
    assert result is not None, "the result is attached"
    assert result.status == "failed"
    assert result.step_results[0]["tool_results"][0]["tool_call_id"] == "h"
    run_id = result.run_id

    own_server.script("resume")
    time.sleep(0.4)  # past the dead worker's lease
    noop = define_tool(AgentTool(id="halt", execute=lambda _i, _rt: "halted"))
    rescuer = create_agent(id="halter", tools=[noop], store=store, lease=lease())
    done = rescuer.recover(run_id, client=ScriptedClient([calls(call("h", "halt")), {"text": "done"}]))
    assert done.status == "completed" and done.output == "done"
    stored = store.load(run_id)
    assert stored is not None and stored.status == "completed"


def deploy_agent(store: Any) -> Any:
    tool = define_tool(AgentTool(id="deploy", execute=lambda _i, _rt: "deployed", require_approval=True))
    return create_agent(id="store-corrupt", tools=[tool], store=store)


def pause(agent: Any) -> RunResult:
    result: RunResult = agent.run(input="deploy", client=ScriptedClient([calls(call("c1", "deploy"))]))
    assert result.status == "waiting_for_human"
    return result


def sql(path: Path, statement: str, *args: Any) -> None:
    conn = sqlite3.connect(path)
    try:
        conn.execute(statement, args)
        conn.commit()
    finally:
        conn.close()


def test_a_corrupted_state_names_the_run_and_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    store = SqliteRunStore(path)
    agent = deploy_agent(store)
    broken, intact = pause(agent), pause(agent)
    sql(path, "UPDATE phaseo_runs SET state = '{\"run\": 42}' WHERE run_id = ?", broken.run_id)

    with pytest.raises(AgentStateError) as loaded:
        store.load(broken.run_id)
    assert loaded.value.code == "state_invalid"
    assert str(loaded.value).startswith(f"Stored state of run {broken.run_id} is invalid:"), str(loaded.value)
    with pytest.raises(AgentError) as continued:
        agent.continue_run(run_id=broken.run_id, client=ScriptedClient([{"text": "no"}]), approvals=["c1"])
    assert broken.run_id in str(continued.value), str(continued.value)
    # The refused continue claimed nothing: the row is as the corruption left it.
    conn = sqlite3.connect(path)
    status, state = conn.execute("SELECT status, state FROM phaseo_runs WHERE run_id = ?", (broken.run_id,)).fetchone()
    conn.close()
    assert (status, state) == ("waiting_for_human", '{"run": 42}')
    # The other run is untouched and still continues.
    done = agent.continue_run(run_id=intact.run_id, client=ScriptedClient([{"text": "ok"}]), approvals=["c1"])
    assert done.status == "completed"


def test_a_corrupted_column_is_a_store_error_naming_the_run(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    store = SqliteRunStore(path)
    paused = pause(deploy_agent(store))
    sql(path, "UPDATE phaseo_runs SET version = 'not a number' WHERE run_id = ?", paused.run_id)
    with pytest.raises(AgentStoreError) as e:
        store.load(paused.run_id)
    assert e.value.code == "store_failed"
    assert str(e.value).startswith(f"Run store failed: the row of run {paused.run_id} cannot be read:"), str(e.value)


def schema_version() -> int:
    # The version the SDK writes, read back from a fresh file rather than hard-coded here.
    with_file = Path(f"/tmp/phaseo-schema-{uuid.uuid4()}.db")
    try:
        SqliteRunStore(with_file)
        conn = sqlite3.connect(with_file)
        (version,) = conn.execute("SELECT version FROM phaseo_schema_version").fetchone()
        conn.close()
        return int(version)
    finally:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{with_file}{suffix}").unlink(missing_ok=True)


def test_a_newer_sqlite_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    paused = pause(deploy_agent(SqliteRunStore(path)))
    sql(path, "UPDATE phaseo_schema_version SET version = 99")
    with pytest.raises(AgentStoreError) as e:
        SqliteRunStore(path)
    assert str(e.value) == SCHEMA_TOO_NEW.format(schema_version()) + "; upgrade the SDK"
    # Nothing was migrated or dropped: the run is still in the file.
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT COUNT(*) FROM phaseo_runs WHERE run_id = ?", (paused.run_id,)).fetchone() == (1,)
    conn.close()


def psql(url: str, statement: str) -> None:
    out = subprocess.run(["psql", url, "-v", "ON_ERROR_STOP=1", "-q", "-c", statement],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr


def test_a_newer_postgres_schema_is_refused() -> None:
    shared = postgres_url()
    db = f"schema_{uuid.uuid4().hex}"
    psql(shared, f"CREATE DATABASE {db}")
    url = shared.rsplit("/", 1)[0] + f"/{db}"
    PostgresRunStore(url)
    psql(url, "UPDATE phaseo_schema_version SET version = 99")
    with pytest.raises(AgentStoreError) as e:
        PostgresRunStore(url)
    assert str(e.value) == SCHEMA_TOO_NEW.format(schema_version()) + "; upgrade the SDK"
