"""The interpreter exits cleanly whatever an abandoned synchronous tool does meanwhile.

A `def` tool that timed out (or whose run was cancelled) and ignores `runtime.cancelled`
keeps running on its worker thread after the run returned. When the script then ends, the
tool may return, raise or wake from a sleep while CPython finalizes; none of that may
crash the process (a "Fatal Python error" at exit on CPython 3.13), change its exit
status or hold the exit for long.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time

import pytest

# Runs in a fresh interpreter so its exit can be observed. argv[1] is a JSON object:
# `end` (what the tool does once its sleep is over: "return" or "raise"), `sleep_s` (how
# long it sleeps, ignoring cancellation), `poll` (sleep in 1 ms steps: the tool wakes over
# and over, so some wake lands inside finalization), `cancel` (cancel the run instead of
# timing the tool out) and `slow_finalizer` (garbage whose `__del__` sleeps 0.3 s while the
# interpreter finalizes, so the tool's end lands during finalization).
SCRIPT = textwrap.dedent(
    """
    import json, sys, threading, time
    from phaseo_agent import AgentTool, CancelToken, ScriptedClient, create_agent, define_tool

    options = json.loads(sys.argv[1])
    started = threading.Event()

    def stubborn(tool_input, runtime):
        started.set()
        deadline = time.monotonic() + options["sleep_s"]
        if options["poll"]:
            while time.monotonic() < deadline:
                time.sleep(0.001)
        else:
            time.sleep(options["sleep_s"])
        if options["end"] == "raise":
            raise RuntimeError("too late")
        return {"late": True}

    timeout_ms = 60_000 if options["cancel"] else 50
    agent = create_agent({"id": "exit", "tools": [
        define_tool(AgentTool(id="stubborn", execute=stubborn, timeout_ms=timeout_ms)),
    ], "tool_execution": {"on_error": "return-to-model"}})
    client = ScriptedClient([
        {"tool_calls": [{"id": "c1", "name": "stubborn", "arguments": "{}"}]},
        {"text": "done"},
    ])
    token = CancelToken()
    if options["cancel"]:
        def cancel_once_started():
            started.wait(10)
            token.cancel()
        threading.Thread(target=cancel_once_started, daemon=True).start()
    result = agent.run(input="go", client=client, cancel=token)
    print(json.dumps({"status": result.status, "returned_at": time.time()}), flush=True)

    class SlowFinalizer:
        def __del__(self, sleep=time.sleep):  # the module's globals may be gone by then
            sleep(0.3)

    if options["slow_finalizer"]:
        # Garbage in a cycle, which only the interpreter's last collection (while it
        # finalizes) finds: the automatic collections are off.
        import gc
        gc.disable()
        cycle = SlowFinalizer()
        cycle.me = cycle
        del cycle
    """
)


def run_child(
    *, end: str, sleep_s: float, poll: bool = False, cancel: bool = False, slow_finalizer: bool = False
) -> tuple[dict[str, object], float]:
    options = {"end": end, "sleep_s": sleep_s, "poll": poll, "cancel": cancel, "slow_finalizer": slow_finalizer}
    child = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(options)], capture_output=True, text=True, timeout=60
    )
    exited_at = time.time()
    assert "Fatal Python error" not in child.stderr, child.stderr
    assert child.returncode == 0, (child.returncode, child.stderr)
    report = json.loads(child.stdout.strip().splitlines()[-1])
    return report, exited_at - float(report["returned_at"])


@pytest.mark.parametrize("end", ["return", "raise"])
def test_a_timed_out_tool_ending_during_finalization(end: str) -> None:
    report, _ = run_child(end=end, sleep_s=0.2, slow_finalizer=True)
    assert report["status"] == "completed"


@pytest.mark.parametrize("end", ["return", "raise"])
def test_a_timed_out_tool_waking_again_and_again_through_the_exit(end: str) -> None:
    # Sleep lengths around the moment the interpreter exits (the run returns after ~50 ms).
    for sleep_s in (0.06, 0.1, 0.15, 0.25):
        report, _ = run_child(end=end, sleep_s=sleep_s, poll=True)
        assert report["status"] == "completed"


def test_a_timed_out_tool_still_sleeping_long_after_the_exit() -> None:
    report, exit_took = run_child(end="return", sleep_s=30)
    assert report["status"] == "completed"
    assert exit_took < 10.0, "the exit waited for the abandoned tool"  # its sleep is 30 s


@pytest.mark.parametrize("end", ["return", "raise"])
def test_a_cancelled_run_whose_tool_ends_during_finalization(end: str) -> None:
    report, _ = run_child(end=end, sleep_s=0.2, cancel=True, slow_finalizer=True)
    assert report["status"] == "cancelled"


def test_a_cancelled_run_whose_tool_keeps_waking_through_the_exit() -> None:
    report, exit_took = run_child(end="return", sleep_s=0.3, poll=True, cancel=True)
    assert report["status"] == "cancelled"
    assert exit_took < 3.0


# A run on a daemon thread is still going when the script ends (its tool has no timeout):
# the thread, blocked in `agent.run` without the GIL, comes back during finalization (the
# blocking run wakes every 50 ms). argv[1] is `sleep` (the tool sleeps) or `wait` (it
# waits on `runtime.cancelled` in short steps, a native call that also comes back).
DAEMON_SCRIPT = textwrap.dedent(
    """
    import sys, threading, time
    from phaseo_agent import AgentTool, ScriptedClient, create_agent, define_tool

    started = threading.Event()

    def slow(tool_input, runtime):
        started.set()
        if sys.argv[1] == "sleep":
            time.sleep(30)
        else:
            while not runtime.cancelled.wait(0.01):
                pass
        return "late"

    agent = create_agent({"id": "daemon", "tools": [define_tool(AgentTool(id="slow", execute=slow))]})
    client = ScriptedClient([
        {"tool_calls": [{"id": "c1", "name": "slow", "arguments": "{}"}]},
        {"text": "done"},
    ])
    threading.Thread(target=lambda: agent.run(input="go", client=client), daemon=True).start()
    started.wait(10)
    time.sleep(0.1)  # the run's background loop is up

    class SlowFinalizer:
        def __del__(self, sleep=time.sleep):
            sleep(0.3)

    import gc
    gc.disable()
    cycle = SlowFinalizer()
    cycle.me = cycle
    del cycle
    print("exiting", flush=True)
    """
)


@pytest.mark.parametrize("tool", ["sleep", "wait"])
def test_a_run_on_a_daemon_thread_still_going_at_exit(tool: str) -> None:
    started = time.monotonic()
    child = subprocess.run([sys.executable, "-c", DAEMON_SCRIPT, tool], capture_output=True, text=True, timeout=60)
    assert "Fatal Python error" not in child.stderr, child.stderr
    assert child.returncode == 0, (child.returncode, child.stderr)
    assert child.stdout.strip() == "exiting"
    # An interpreter starting on a loaded machine takes a while; an exit waiting for the run
    # would take the tool's 30 s sleep (or forever).
    assert time.monotonic() - started < 10.0, "the exit waited for the run"


def test_a_bridge_closed_before_its_loop_registered_it_is_skipped() -> None:
    """A loop's bridge created from outside the loop registers its socket from the loop;
    when the bridge was closed first (its loop collected, the interpreter exiting), the
    registration does nothing instead of failing on the closed socket."""
    import asyncio

    from phaseo_agent import _bridge

    loop = asyncio.new_event_loop()
    errors: list[dict[str, object]] = []
    loop.set_exception_handler(lambda _loop, context: errors.append(context))
    _bridge.bridge_for(loop)  # not running: the registration is scheduled on the loop
    _bridge._close(*_bridge._bridges.pop(loop))
    loop.run_until_complete(asyncio.sleep(0))
    loop.close()
    assert errors == []
