"""Run stores (docs/behaviour.md §10) from Python, against SQLite and a real PostgreSQL: round trip,
continue by id (here and from another process), at most once across 8 racing processes,
recovery after a SIGKILLed worker, the approval inbox listing, prune, the product's
load/save accessor, and the error classes."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

import pytest

from phaseo_agent import (AgentContinueError, AgentStoreError, AgentTool, InMemoryRunStore, PostgresRunStore,
                          RunResult, RunStore, ScriptedClient, SqliteRunStore, create_agent, define_tool)

from conftest import call, calls

WORKER = str(Path(__file__).with_name("store_worker.py"))
PG_SERVER = Path(__file__).resolve().parents[2] / "scripts" / "pg-test-server.sh"


def postgres_url() -> str:
    url = os.environ.get("PHASEO_TEST_POSTGRES_URL")
    if not url:
        pytest.fail("PHASEO_TEST_POSTGRES_URL is not set: run the store tests under scripts/with-test-postgres.sh "
                    "(e.g. scripts/with-test-postgres.sh make python-tests); a PostgreSQL test never skips")
    return url


@pytest.fixture(params=["sqlite", "postgres"])
def store_spec(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:{tmp_path / 'runs.db'}"
    return postgres_url()


def database_of_its_own(spec: str) -> str:
    """The spec of a store only this test writes to. The suite's concurrent tests share one
    PostgreSQL database, and a test that prunes every completed run would delete the runs
    another test is still racing to continue; it gets an empty database instead."""
    if spec.startswith("sqlite:"):
        return spec  # already a file of this test's own
    out = subprocess.run(["bash", str(PG_SERVER), "database"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]


def open_store(spec: str) -> RunStore:
    if spec.startswith("sqlite:"):
        return SqliteRunStore(spec[len("sqlite:"):])
    return PostgresRunStore(spec)


@pytest.fixture
def exec_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    log = tmp_path / "executions.log"
    log.write_text("")
    monkeypatch.setenv("PHASEO_EXEC_LOG", str(log))
    return log


def executions(log: Path) -> List[str]:
    return [line for line in log.read_text().splitlines() if line]


def worker(spec: str, *args: str) -> Dict[str, Any]:
    out = subprocess.run([sys.executable, WORKER, spec, *args], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    answer: Dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return answer


def deploy_agent(store: Any, log: Optional[List[str]] = None, agent_id: str = "store-worker") -> Any:
    def execute(_i: Dict[str, Any], _rt: Any) -> str:
        if log is not None:
            log.append("ran")
        return "deployed"

    tool = define_tool(AgentTool(id="deploy", execute=execute, require_approval=True))
    return create_agent(id=agent_id, tools=[tool], store=store)


def pause(agent: Any, **kwargs: Any) -> RunResult:
    result: RunResult = agent.run(input="deploy", client=ScriptedClient([calls(call("c1", "deploy"))]), **kwargs)
    assert result.status == "waiting_for_human"
    return result


def test_save_and_load_round_trip(store_spec: str) -> None:
    store = open_store(store_spec)
    paused = pause(deploy_agent(store))
    stored = store.load(paused.run_id)
    assert stored is not None
    assert stored.run_id == paused.run_id
    assert stored.status == "waiting_for_human"
    assert stored.pause_id == paused.pause["id"]
    assert stored.state.to_json() == paused.to_json()
    assert [p.tool_call_id for p in stored.pending] == ["c1"]
    assert store.load(str(uuid.uuid4())) is None


def test_continue_by_id_in_process(store_spec: str) -> None:
    store = open_store(store_spec)
    ran: List[str] = []
    agent = deploy_agent(store, ran)
    paused = pause(agent)
    done = agent.continue_run(run_id=paused.run_id, client=ScriptedClient([{"text": "done"}]), approvals=["c1"])
    assert done.status == "completed" and done.output == "done"
    assert ran == ["ran"]
    stored = store.load(paused.run_id)
    assert stored is not None and stored.status == "completed"
    with pytest.raises(AgentContinueError) as e:
        agent.continue_run(run_id=paused.run_id, client=ScriptedClient([{"text": "again"}]), approvals=["c1"])
    assert str(e.value) == f"Pause {paused.pause['id']} of run {paused.run_id} was already continued"
    assert ran == ["ran"]


def test_continue_by_id_async_and_per_run_store(store_spec: str) -> None:
    store = open_store(store_spec)
    agent = deploy_agent(None)

    async def go() -> RunResult:
        paused = await agent.run_async(input="deploy", client=ScriptedClient([calls(call("c1", "deploy"))]),
                                       store=store)
        result: RunResult = await agent.continue_run_async(run_id=paused.run_id, store=store,
                                                           client=ScriptedClient([{"text": "ok"}]), approvals=["c1"])
        return result

    assert asyncio.run(go()).status == "completed"


def test_pause_continued_from_another_process(store_spec: str, exec_log: Path) -> None:
    paused = worker(store_spec, "pause")
    assert paused["status"] == "waiting_for_human"
    done = worker(store_spec, "continue", paused["run_id"])
    assert done == {"run_id": paused["run_id"], "status": "completed", "output": "done"}
    assert len(executions(exec_log)) == 1
    stored = open_store(store_spec).load(paused["run_id"])
    assert stored is not None and stored.status == "completed"


def test_eight_processes_race_to_continue_one_pause(store_spec: str, exec_log: Path) -> None:
    store = open_store(store_spec)
    paused = pause(deploy_agent(store))
    racers = [subprocess.Popen([sys.executable, WORKER, store_spec, "continue", paused.run_id],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(8)]
    answers = []
    for p in racers:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        answers.append(json.loads(out.strip().splitlines()[-1]))
    winners = [a for a in answers if a.get("status") == "completed"]
    losers = [a for a in answers if "error" in a]
    assert len(winners) == 1, answers
    assert len(losers) == 7, answers
    message = f"Pause {paused.pause['id']} of run {paused.run_id} was already continued"
    assert all(a == {"error": "continue_invalid", "message": message} for a in losers), answers
    assert len(executions(exec_log)) == 1


def test_worker_killed_after_its_claim_is_recovered_elsewhere(store_spec: str, exec_log: Path) -> None:
    paused = worker(store_spec, "pause")
    hung = subprocess.Popen([sys.executable, WORKER, store_spec, "continue", paused["run_id"], "--hang"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert hung.stdout is not None
    line = hung.stdout.readline()
    assert json.loads(line) == {"executing": True}, hung.stderr.read() if hung.stderr else line
    os.kill(hung.pid, signal.SIGKILL)
    hung.wait(timeout=30)
    store = open_store(store_spec)
    stored = store.load(paused["run_id"])
    assert stored is not None and stored.status == "running"
    # The dead worker's lease (1 s) must expire before anyone may take the run over. Checked
    # from this process: starting another can take longer than the lease on a busy machine.
    rescuer = create_agent(id="store-worker", store=store)
    with pytest.raises(AgentContinueError) as early:
        rescuer.recover(paused["run_id"], client=ScriptedClient([{"text": "done"}]))
    assert early.value.code == "continue_invalid", early.value
    assert len(executions(exec_log)) == 1
    time.sleep(1.3)
    done = worker(store_spec, "recover", paused["run_id"])
    assert done == {"run_id": paused["run_id"], "status": "completed", "output": "done"}
    # The approval stored by the claim was used: the tool ran again, to completion.
    assert len(executions(exec_log)) == 2
    final = store.load(paused["run_id"])
    assert final is not None and final.status == "completed"


def test_a_worker_whose_lease_was_taken_over_gets_lease_lost(store_spec: str, exec_log: Path) -> None:
    paused = worker(store_spec, "pause")
    slow = subprocess.Popen([sys.executable, WORKER, store_spec, "continue", paused["run_id"], "--slow"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert slow.stdout is not None
    assert json.loads(slow.stdout.readline()) == {"executing": True}
    # Frozen past its 1 s lease, the worker cannot renew it: another process recovers the run.
    os.kill(slow.pid, signal.SIGSTOP)
    try:
        time.sleep(1.3)
        done = worker(store_spec, "recover", paused["run_id"])
    finally:
        os.kill(slow.pid, signal.SIGCONT)
    assert done["status"] == "completed", done
    out, err = slow.communicate(timeout=60)
    assert slow.returncode == 0, err
    answer = json.loads(out.strip().splitlines()[-1])
    assert answer == {"error": "lease_lost",
                      "message": f"Run {paused['run_id']} was taken over by another worker (lease lost)"}
    final = open_store(store_spec).load(paused["run_id"])
    assert final is not None and final.status == "completed"


def test_inbox_listing_pages_and_prune(store_spec: str) -> None:
    store = open_store(database_of_its_own(store_spec))
    agent_id = f"inbox-{uuid.uuid4()}"
    agent = deploy_agent(store, agent_id=agent_id)
    paused = [pause(agent).run_id for _ in range(5)]
    done = agent.run(input="hi", client=ScriptedClient([{"text": "hello"}]))
    seen: List[str] = []
    cursor: Optional[str] = None
    pages = 0
    while True:
        page = store.list(status="waiting_for_human", agent_id=agent_id, limit=2, cursor=cursor)
        pages += 1
        assert len(page.runs) <= 2
        for run in page.runs:
            assert run.status == "waiting_for_human"
            assert [p.tool_call_id for p in run.pending] == ["c1"]
        seen += [r.run_id for r in page.runs]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert pages == 3
    assert sorted(seen) == sorted(paused)
    every = store.list(agent_id=agent_id)
    assert {r.run_id for r in every.runs} == set(paused) | {done.run_id}
    assert store.prune(["completed"], older_than=timedelta(seconds=-60)) == 1
    assert store.load(done.run_id) is None
    assert store.load(paused[0]) is not None
    assert store.delete(paused[0]) is True
    assert store.delete(paused[0]) is False
    assert len(store.list(status=["waiting_for_human"], agent_id=agent_id).runs) == 4

    async def listed() -> int:
        page = await store.list_async(status="waiting_for_human", agent_id=agent_id)
        return len(page.runs)

    assert asyncio.run(listed()) == 4


def test_unknown_status_and_bad_cursor_are_clear_errors() -> None:
    store = InMemoryRunStore()
    with pytest.raises(AgentStoreError, match="unknown run status 'paused'"):
        store.list(status="paused")
    with pytest.raises(AgentStoreError, match="invalid list cursor"):
        store.list(cursor="nonsense")


def test_postgres_unreachable_is_a_store_error() -> None:
    with pytest.raises(AgentStoreError):
        PostgresRunStore("postgres://nobody@127.0.0.1:1/none?connect_timeout=2")


class DictAccessor:
    """The product's state accessor: load(run_id) / save(state)."""

    def __init__(self) -> None:
        self.saved: Dict[str, RunResult] = {}

    def load(self, run_id: str) -> Optional[RunResult]:
        return self.saved.get(run_id)

    def save(self, state: RunResult) -> None:
        self.saved[state.run_id] = state


def test_host_accessor_as_state_and_as_store() -> None:
    accessor = DictAccessor()
    agent = deploy_agent(None)
    paused = pause(agent, state=accessor)
    assert accessor.saved[paused.run_id].status == "waiting_for_human"
    done = agent.continue_run(run_id=paused.run_id, state=accessor, client=ScriptedClient([{"text": "ok"}]),
                              approvals=["c1"])
    assert done.status == "completed"
    assert accessor.saved[paused.run_id].status == "completed"

    class AsyncAccessor(DictAccessor):
        async def load(self, run_id: str) -> Optional[RunResult]:  # type: ignore[override]
            return self.saved.get(run_id)

        async def save(self, state: RunResult) -> None:  # type: ignore[override]
            self.saved[state.run_id] = state

    async_accessor = AsyncAccessor()
    store_agent = deploy_agent(async_accessor)

    async def go() -> str:
        p = await store_agent.run_async(input="x", client=ScriptedClient([calls(call("c1", "deploy"))]))
        r = await store_agent.continue_run_async(run_id=p.run_id, client=ScriptedClient([{"text": "ok"}]),
                                                 approvals=["c1"])
        return str(r.status)

    assert asyncio.run(go()) == "completed"


def test_failing_accessor_gives_store_error_with_result() -> None:
    class Broken:
        def load(self, run_id: str) -> None:
            return None

        def save(self, state: RunResult) -> None:
            raise OSError("disk full")

    agent = deploy_agent(None)
    with pytest.raises(AgentStoreError, match="disk full") as e:
        agent.run(input="x", client=ScriptedClient([{"text": "hi"}]), state=Broken())
    assert e.value.result is not None


def test_bad_store_option_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match="store must be a RunStore"):
        create_agent(id="x", store="runs.db")
    agent = deploy_agent(None)
    with pytest.raises(AgentContinueError, match="needs a run store"):
        agent.continue_run(run_id="r", client=ScriptedClient([]))


def test_a_state_and_a_run_id_must_agree(tmp_path: Path) -> None:
    store = SqliteRunStore(tmp_path / "runs.db")
    agent = deploy_agent(store)
    first, second = pause(agent), pause(agent)
    with pytest.raises(AgentContinueError, match=f"The state given is of run {first.run_id}, not of run {second.run_id}"):
        agent.continue_run(state=first, run_id=second.run_id, client=ScriptedClient([]), approvals=["c1"])
    done = agent.continue_run(state=first, run_id=first.run_id, client=ScriptedClient([{"text": "ok"}]), approvals=["c1"])
    assert done.status == "completed"
