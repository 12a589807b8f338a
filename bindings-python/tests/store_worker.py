"""A worker process of the run-store tests: pauses a run, continues one by id, or
recovers one, against the store named on the command line, and prints one JSON line.

    python store_worker.py STORE pause
    python store_worker.py STORE continue RUN_ID [--hang | --slow]
    python store_worker.py STORE recover RUN_ID

STORE is ``sqlite:<path>`` or a PostgreSQL URL. Every execution of the ``deploy`` tool
appends a line to the file ``$PHASEO_EXEC_LOG``; with ``--hang`` the tool then blocks
forever (the test SIGKILLs the worker after its claim); with ``--slow`` it returns after
2 s (the test freezes the worker meanwhile, so that its lease is taken over)."""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any, Dict

from phaseo_agent import (AgentError, AgentTool, PostgresRunStore, RunStore, ScriptedClient, SqliteRunStore,
                          create_agent, define_tool)

AGENT_ID = "store-worker"


def open_store(spec: str) -> RunStore:
    if spec.startswith("sqlite:"):
        return SqliteRunStore(spec[len("sqlite:"):])
    return PostgresRunStore(spec)


def deploy(_input: Dict[str, Any], _rt: Any) -> str:
    with open(os.environ["PHASEO_EXEC_LOG"], "a") as log:
        log.write(f"{os.getpid()}\n")
    if os.environ.get("PHASEO_HANG") == "1":
        print(json.dumps({"executing": True}), flush=True)
        while True:
            time.sleep(1)
    if os.environ.get("PHASEO_SLOW") == "1":
        print(json.dumps({"executing": True}), flush=True)
        time.sleep(2)
    return "deployed"


def main() -> None:
    spec, mode = sys.argv[1], sys.argv[2]
    store = open_store(spec)
    tool = define_tool(AgentTool(id="deploy", execute=deploy, require_approval=True))
    agent = create_agent(id=AGENT_ID, tools=[tool], store=store, lease={"duration_ms": 1000, "renew_every_ms": 250})
    try:
        if mode == "pause":
            call = {"id": "c1", "name": "deploy", "arguments": "{}"}
            result = agent.run(input="deploy please", client=ScriptedClient([{"tool_calls": [call]}]))
        elif mode == "continue":
            if "--hang" in sys.argv:
                os.environ["PHASEO_HANG"] = "1"
            if "--slow" in sys.argv:
                os.environ["PHASEO_SLOW"] = "1"
            result = agent.continue_run(run_id=sys.argv[3], client=ScriptedClient([{"text": "done"}]), approvals=["c1"])
        elif mode == "recover":
            result = agent.recover(sys.argv[3], client=ScriptedClient([{"text": "done"}]))
        else:
            raise SystemExit(f"unknown mode {mode}")
    except AgentError as e:
        print(json.dumps({"error": e.code, "message": str(e)}), flush=True)
        return
    print(json.dumps({"run_id": result.run_id, "status": result.status, "output": result.output}), flush=True)


if __name__ == "__main__":
    main()
