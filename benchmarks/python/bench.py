"""Phaseo Agent SDK (Python binding) vs the Python peers, back to back in one invocation.

Run it with ``bash benchmarks/python/run.sh`` (creates the venv, installs the pinned peers
``pydantic-ai-slim==2.68.0`` / ``openai-agents==0.24.0`` and our SDK in release mode).

Workloads and counting follow the peer baselines (shared/bench-peers: README.md,
bench_pydantic_ai.py, bench_openai_agents.py, pyutil.py); the peer harness code below is a
copy of theirs, only parameterised by size:

  empty              one model turn that returns final text (run-loop floor; per_call_net_us)
  fanout_def         one turn with N=1000 calls to ``add(a, b)`` (a ``def`` tool), then a final turn
  fanout_async       the same with ``async def add``
  fanout_def_blocking  ours only: fanout_def through the blocking ``agent.run(...)``
  seq_25/200/400     25/200/400 turns of one ``add`` call each, then a final turn (µs per turn)
  sleepy             one turn with 100 calls to an ``async def`` tool sleeping 50 ms (wall ms); the
                     same sleeps under a bare ``asyncio.gather`` are timed too, as the floor

Arguments are JSON strings and call ids unique, as from a real provider. Building the script
(our ``ScriptedClient``, the peers' scripted models) and the agent is untimed (setup); the whole
``await agent.run_async(...)`` / ``Runner.run`` / ``Agent.run`` call is timed. 1 warm-up + 5
timed runs, ``gc.collect()`` before each, median reported (as pyutil.measure). Every run checks
the final output and the number of tool invocations. Our SDK runs with
``tool_execution={"tool_concurrency": 1000}`` (≥ the calls of a turn; the peers start every call
of a turn at once).

Environment overrides: RUNS (5), FANOUT_N (1000), SEQ_SIZES ("25,200,400"), SLEEPY_N (100),
SDKS ("ours,pydantic-ai,openai-agents"), WORKLOADS (comma list of workload names, default all).
Prints a table, the targets, then one JSON document with every figure.
"""
from __future__ import annotations

import asyncio
import gc
import importlib.metadata as md
import json
import os
import platform
import statistics
import sys
import time
from typing import Any, Awaitable, Callable, Dict, List, Optional

RUNS = int(os.environ.get("RUNS", 5))
WARMUP = 1
FANOUT_N = int(os.environ.get("FANOUT_N", 1000))
SEQ_SIZES = [int(s) for s in os.environ.get("SEQ_SIZES", "25,200,400").split(",") if s.strip()]
SLEEPY_N = int(os.environ.get("SLEEPY_N", 100))
SLEEP_S = 0.05
SDKS = [s.strip() for s in os.environ.get("SDKS", "ours,pydantic-ai,openai-agents").split(",") if s.strip()]
_WL = os.environ.get("WORKLOADS")
WORKLOADS = None if not _WL else {w.strip() for w in _WL.split(",") if w.strip()}
OURS, PYD, OAI = "ours", "pydantic-ai", "openai-agents"
PEERS = [PYD, OAI]

# Shared by every SDK's tools; reset in each run's setup.
counter = {"n": 0}


# --------------------------------------------------------------------------------------------
# Timing (same method as shared/bench-peers/pyutil.py: setup untimed, gc before each run,
# 1 warm-up + RUNS timed runs, median and min in ms)
# --------------------------------------------------------------------------------------------

def _summary(samples: List[float]) -> Dict[str, Any]:
    return {
        "median_ms": round(statistics.median(samples), 3),
        "min_ms": round(min(samples), 3),
        "runs": len(samples),
    }


async def measure(setup: Callable[[], Any], run: Callable[[Any], Awaitable[Any]],
                  check: Callable[[Any, Any], None], runs: int = RUNS, warmup: int = WARMUP) -> Dict[str, Any]:
    samples: List[float] = []
    for i in range(warmup + runs):
        state = setup()
        gc.collect()
        t0 = time.perf_counter_ns()
        result = await run(state)
        dt = time.perf_counter_ns() - t0
        check(state, result)
        if i >= warmup:
            samples.append(dt / 1e6)
    return _summary(samples)


def measure_sync(setup: Callable[[], Any], run: Callable[[Any], Any],
                 check: Callable[[Any, Any], None], runs: int = RUNS, warmup: int = WARMUP) -> Dict[str, Any]:
    samples: List[float] = []
    for i in range(warmup + runs):
        state = setup()
        gc.collect()
        t0 = time.perf_counter_ns()
        result = run(state)
        dt = time.perf_counter_ns() - t0
        check(state, result)
        if i >= warmup:
            samples.append(dt / 1e6)
    return _summary(samples)


def per_call(res: Dict[str, Any], n: int, base_ms: Optional[float] = None) -> Dict[str, Any]:
    """total/N µs, and (total - empty run)/N when the empty run is known (as pyutil.per_call)."""
    res = dict(res)
    res["n"] = n
    res["per_call_us"] = round(res["median_ms"] * 1000 / n, 2)
    if base_ms is not None:
        res["per_call_net_us"] = round((res["median_ms"] - base_ms) * 1000 / n, 2)
    return res


def versions(*pkgs: str) -> Dict[str, str]:
    out = {}
    for p in pkgs:
        try:
            out[p] = md.version(p)
        except md.PackageNotFoundError:
            out[p] = "missing"
    return out


def git_state() -> Dict[str, Any]:
    """HEAD and the uncommitted files of what was built (the numbers belong to this tree)."""
    import subprocess

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", "-C", root, *args], capture_output=True, text=True, timeout=10).stdout.rstrip()
        except (OSError, subprocess.SubprocessError):
            return ""

    dirty = [ln[3:] for ln in git("status", "--porcelain", "--", "core", "bindings-python").splitlines()]
    return {
        "head": git("rev-parse", "--short", "HEAD").strip(), "dirty_core_or_binding": dirty,
        # set by run.sh when it builds the package; without run.sh the installed package may be older
        "package_built_from": os.environ.get("PHASEO_BENCH_BUILT_FROM", "unknown (not run through run.sh)"),
    }


def load1() -> float:
    try:
        return float(open("/proc/loadavg").read().split()[0])
    except OSError:
        return float("nan")


# --------------------------------------------------------------------------------------------
# Our SDK (phaseo_agent): built-in ScriptedClient, tools take (tool_input, runtime)
# --------------------------------------------------------------------------------------------

class Ours:
    name = OURS

    def __init__(self) -> None:
        import phaseo_agent as pa

        self.pa = pa
        ints = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"]}

        def add(tool_input: Dict[str, Any], runtime: Any) -> int:
            """Add two integers (a def tool)."""
            counter["n"] += 1
            return tool_input["a"] + tool_input["b"]

        async def add_async(tool_input: Dict[str, Any], runtime: Any) -> int:
            """Add two integers, as a coroutine."""
            counter["n"] += 1
            return tool_input["a"] + tool_input["b"]

        async def nap(tool_input: Dict[str, Any], runtime: Any) -> int:
            """Sleep 50 ms, return i."""
            counter["n"] += 1
            await asyncio.sleep(SLEEP_S)
            return tool_input["i"]

        # The same parameter schemas the peers derive from `add(a: int, b: int)` / `nap(i: int)`;
        # the core validates the arguments against them, as pydantic does for the peers.
        self.tools = {
            "add": pa.define_tool(pa.AgentTool(id="add", description="Add two integers.",
                                               parameters=ints, execute=add)),
            "add_async": pa.define_tool(pa.AgentTool(id="add_async", description="Add two integers.",
                                                     parameters=ints, execute=add_async)),
            "nap": pa.define_tool(pa.AgentTool(
                id="nap", description="Sleep 50 ms, return i.",
                parameters={"type": "object", "properties": {"i": {"type": "integer"}}, "required": ["i"]},
                execute=nap)),
        }

    @staticmethod
    def call(name: str, call_id: str, args: dict) -> Dict[str, Any]:
        return {"id": call_id, "name": name, "arguments": json.dumps(args)}

    @staticmethod
    def final() -> Dict[str, Any]:
        return {"text": "done"}

    def empty_turns(self) -> List[Dict[str, Any]]:
        return [self.final()]

    def fanout_turns(self, n: int, name: str = "add") -> List[Dict[str, Any]]:
        return [{"tool_calls": [self.call(name, f"c{i}", {"a": i, "b": 1}) for i in range(n)]}, self.final()]

    def seq_turns(self, n: int) -> List[Dict[str, Any]]:
        return [{"tool_calls": [self.call("add", f"c{i}", {"a": i, "b": 1})]} for i in range(n)] + [self.final()]

    def sleepy_turns(self, n: int) -> List[Dict[str, Any]]:
        return [{"tool_calls": [self.call("nap", f"c{i}", {"i": i}) for i in range(n)]}, self.final()]

    def _parts(self, tool: Optional[str], make_turns: Callable[[], List[Any]], expected: int, max_steps: int):
        pa = self.pa

        def setup():
            counter["n"] = 0
            agent = pa.create_agent({
                "id": "bench", "instructions": "bench",
                "tools": [self.tools[tool]] if tool else [],
                "max_steps": max_steps,
                "tool_execution": {"tool_concurrency": 1000},
            })
            # Built here, untimed; a ScriptedClient is consumed by one run.
            return agent, pa.ScriptedClient(make_turns())

        def check(state, result):
            assert result.status == "completed", (result.status, result.error)
            assert result.output == "done", result.output
            assert counter["n"] == expected, (counter["n"], expected)

        return setup, check

    async def workload(self, tool, make_turns, expected: int, max_steps: int) -> Dict[str, Any]:
        setup, check = self._parts(tool, make_turns, expected, max_steps)

        async def run(state):
            agent, client = state
            return await agent.run_async(input="go", client=client)

        return await measure(setup, run, check)

    def workload_blocking(self, tool, make_turns, expected: int, max_steps: int) -> Dict[str, Any]:
        setup, check = self._parts(tool, make_turns, expected, max_steps)

        def run(state):
            agent, client = state
            return agent.run(input="go", client=client)

        return measure_sync(setup, run, check)

    def versions(self) -> Dict[str, str]:
        return versions("phaseo-agent-sdk")


# --------------------------------------------------------------------------------------------
# Pydantic AI (copy of shared/bench-peers/bench_pydantic_ai.py)
# --------------------------------------------------------------------------------------------

class PydanticAI:
    name = PYD

    def __init__(self) -> None:
        from pydantic_ai import Agent
        from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
        from pydantic_ai.models.function import FunctionModel
        from pydantic_ai.usage import RequestUsage, UsageLimits

        self.Agent, self.ModelResponse, self.TextPart = Agent, ModelResponse, TextPart
        self.ToolCallPart, self.FunctionModel, self.RequestUsage = ToolCallPart, FunctionModel, RequestUsage
        self.no_limits = UsageLimits(request_limit=None)

        def add(a: int, b: int) -> int:
            """Add two integers. (Pydantic AI runs sync tools in a worker thread.)"""
            counter["n"] += 1
            return a + b

        async def add_async(a: int, b: int) -> int:
            """Add two integers, as a coroutine (runs on the event loop, no thread hop)."""
            counter["n"] += 1
            return a + b

        async def nap(i: int) -> int:
            """Sleep 50 ms, return i."""
            counter["n"] += 1
            await asyncio.sleep(SLEEP_S)
            return i

        self.tools = {"add": add, "add_async": add_async, "nap": nap}

    def call(self, name: str, call_id: str, args: dict):
        return self.ToolCallPart(tool_name=name, args=json.dumps(args), tool_call_id=call_id)

    def resp(self, parts: List[Any]):
        # Non-empty usage so FunctionModel skips its own O(history) token estimate.
        return self.ModelResponse(parts=parts, usage=self.RequestUsage(input_tokens=1, output_tokens=1))

    def final(self):
        return self.resp([self.TextPart("done")])

    def empty_turns(self):
        return [self.final()]

    def fanout_turns(self, n: int, name: str = "add"):
        return [self.resp([self.call(name, f"c{i}", {"a": i, "b": 1}) for i in range(n)]), self.final()]

    def seq_turns(self, n: int):
        return [self.resp([self.call("add", f"c{i}", {"a": i, "b": 1})]) for i in range(n)] + [self.final()]

    def sleepy_turns(self, n: int):
        return [self.resp([self.call("nap", f"c{i}", {"i": i}) for i in range(n)]), self.final()]

    def scripted(self, turns):
        it = iter(turns)

        async def fn(messages, info):
            # async so FunctionModel does not hop to a worker thread for the fake model itself
            return next(it)

        return self.FunctionModel(fn)

    async def workload(self, tool, make_turns, expected: int, max_steps: int) -> Dict[str, Any]:
        def setup():
            counter["n"] = 0
            return self.Agent(self.scripted(make_turns()), tools=[self.tools[tool]] if tool else [])

        async def run(agent):
            return await agent.run("go", usage_limits=self.no_limits)

        def check(agent, result):
            assert result.output == "done", result.output
            assert counter["n"] == expected, (counter["n"], expected)

        return await measure(setup, run, check)

    def versions(self) -> Dict[str, str]:
        return versions("pydantic-ai-slim", "pydantic", "pydantic-core")


# --------------------------------------------------------------------------------------------
# OpenAI Agents SDK (copy of shared/bench-peers/bench_openai_agents.py)
# --------------------------------------------------------------------------------------------

class OpenAIAgents:
    name = OAI

    def __init__(self) -> None:
        from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText
        from agents import Agent, RunConfig, Runner, function_tool, set_tracing_disabled
        from agents.items import ModelResponse
        from agents.models.interface import Model
        from agents.usage import Usage

        set_tracing_disabled(True)
        self.Agent, self.Runner = Agent, Runner
        self.ResponseFunctionToolCall = ResponseFunctionToolCall
        self.ResponseOutputMessage, self.ResponseOutputText = ResponseOutputMessage, ResponseOutputText
        self.run_config = RunConfig(tracing_disabled=True)

        class ScriptedModel(Model):
            """Returns pre-built output item lists, one per model turn."""

            def __init__(self, turns):
                self.turns = turns
                self.i = 0

            async def get_response(self, system_instructions, input, model_settings, tools,
                                   output_schema, handoffs, tracing, *, previous_response_id=None,
                                   conversation_id=None, prompt=None):
                out = self.turns[self.i]
                self.i += 1
                return ModelResponse(output=out, usage=Usage(), response_id=None)

            def stream_response(self, *args, **kwargs):  # not used by these benchmarks
                raise NotImplementedError

        self.ScriptedModel = ScriptedModel

        @function_tool
        def add(a: int, b: int) -> int:
            """Add two integers. (The SDK runs sync tools via asyncio.to_thread.)"""
            counter["n"] += 1
            return a + b

        @function_tool
        async def add_async(a: int, b: int) -> int:
            """Add two integers, as a coroutine (runs on the event loop, no thread hop)."""
            counter["n"] += 1
            return a + b

        @function_tool
        async def nap(i: int) -> int:
            """Sleep 50 ms, return i."""
            counter["n"] += 1
            await asyncio.sleep(SLEEP_S)
            return i

        self.tools = {"add": add, "add_async": add_async, "nap": nap}

    def call(self, name: str, call_id: str, args: dict):
        return self.ResponseFunctionToolCall(id=f"fc_{call_id}", call_id=call_id, type="function_call",
                                             name=name, arguments=json.dumps(args))

    def final(self, text: str = "done"):
        return self.ResponseOutputMessage(
            id="msg_final", type="message", role="assistant", status="completed",
            content=[self.ResponseOutputText(text=text, type="output_text", annotations=[])])

    def empty_turns(self):
        return [[self.final()]]

    def fanout_turns(self, n: int, name: str = "add"):
        return [[self.call(name, f"c{i}", {"a": i, "b": 1}) for i in range(n)], [self.final()]]

    def seq_turns(self, n: int):
        return [[self.call("add", f"c{i}", {"a": i, "b": 1})] for i in range(n)] + [[self.final()]]

    def sleepy_turns(self, n: int):
        return [[self.call("nap", f"c{i}", {"i": i}) for i in range(n)], [self.final()]]

    async def workload(self, tool, make_turns, expected: int, max_steps: int) -> Dict[str, Any]:
        def setup():
            counter["n"] = 0
            model = self.ScriptedModel(make_turns())
            return self.Agent(name="bench", instructions="bench", model=model,
                              tools=[self.tools[tool]] if tool else [])

        async def run(agent):
            return await self.Runner.run(agent, "go", max_turns=max_steps, run_config=self.run_config)

        def check(agent, result):
            assert result.final_output == "done", result.final_output
            assert counter["n"] == expected, (counter["n"], expected)

        return await measure(setup, run, check)

    def versions(self) -> Dict[str, str]:
        return versions("openai-agents", "openai", "pydantic")


# --------------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------------

def workloads() -> List[Dict[str, Any]]:
    """name, tool, turns-builder name + args, expected calls, max steps/turns, unit divisor."""
    out: List[Dict[str, Any]] = [
        {"name": "empty", "tool": None, "turns": lambda s: s.empty_turns(), "expected": 0, "max": 5, "n": None},
        {"name": "fanout_def", "tool": "add", "turns": lambda s: s.fanout_turns(FANOUT_N),
         "expected": FANOUT_N, "max": 5, "n": FANOUT_N},
        {"name": "fanout_def_blocking", "tool": "add", "turns": lambda s: s.fanout_turns(FANOUT_N),
         "expected": FANOUT_N, "max": 5, "n": FANOUT_N, "only": OURS},
        {"name": "fanout_async", "tool": "add_async", "turns": lambda s: s.fanout_turns(FANOUT_N, "add_async"),
         "expected": FANOUT_N, "max": 5, "n": FANOUT_N},
    ]
    for size in SEQ_SIZES:
        out.append({"name": f"seq_{size}", "tool": "add", "turns": (lambda n: lambda s: s.seq_turns(n))(size),
                    "expected": size, "max": size + 5, "n": size})
    out.append({"name": "sleepy", "tool": "nap", "turns": lambda s: s.sleepy_turns(SLEEPY_N),
                "expected": SLEEPY_N, "max": 5, "n": None})
    return [w for w in out if WORKLOADS is None or w["name"] in WORKLOADS or w["name"] == "empty"]


async def sleepy_floor() -> Dict[str, Any]:
    """No SDK: asyncio.gather of the same SLEEPY_N sleeps, the floor every SDK's sleepy sits on
    (asyncio's timer granularity and 100 tasks already cost 1-2 ms over 50 ms)."""

    async def nap(i: int) -> int:
        await asyncio.sleep(SLEEP_S)
        return i

    async def run(_: Any) -> Any:
        return await asyncio.gather(*(nap(i) for i in range(SLEEPY_N)))

    def check(_: Any, result: Any) -> None:
        assert len(result) == SLEEPY_N

    return await measure(lambda: None, run, check)


async def run_all() -> Dict[str, Any]:
    sdks: Dict[str, Any] = {}
    for name, cls in ((OURS, Ours), (PYD, PydanticAI), (OAI, OpenAIAgents)):
        if name in SDKS:
            sdks[name] = cls()
    results: Dict[str, Dict[str, Any]] = {}
    empty_ms: Dict[str, float] = {}
    for w in workloads():
        results[w["name"]] = {}
        for name, sdk in sdks.items():
            if w.get("only") not in (None, name):
                continue
            make = (lambda s, f: lambda: f(s))(sdk, w["turns"])
            t_start = time.perf_counter()
            l1 = load1()
            if w["name"].endswith("_blocking"):
                res = sdk.workload_blocking(w["tool"], make, w["expected"], w["max"])
            else:
                res = await sdk.workload(w["tool"], make, w["expected"], w["max"])
            if w["name"] == "empty":
                empty_ms[name] = res["median_ms"]
            elif w["n"] is not None:
                res = per_call(res, w["n"], empty_ms.get(name))
            else:
                res["concurrent"] = res["median_ms"] < SLEEPY_N * SLEEP_S * 1000 / 2
            res["load1"] = l1
            results[w["name"]][name] = res
            sys.stderr.write(f"  {w['name']:<20} {name:<14} {res['median_ms']:>10.3f} ms"
                             f"  ({time.perf_counter() - t_start:.1f} s, load {l1})\n")
            sys.stderr.flush()
    floor = None
    if "sleepy" in results:
        floor = await sleepy_floor()
        floor["load1"] = load1()
        sys.stderr.write(f"  {'sleepy floor':<20} {'asyncio only':<14} {floor['median_ms']:>10.3f} ms\n")
    return {"results": results, "sleepy_floor": floor, "versions": {n: s.versions() for n, s in sdks.items()}}


def figure(results: Dict[str, Any], wl: str, sdk: str) -> Optional[float]:
    """The reported figure of a workload: µs per call/turn, or wall ms (empty, sleepy)."""
    r = results.get(wl, {}).get(sdk)
    if r is None:
        return None
    return r["per_call_us"] if "per_call_us" in r else r["median_ms"]


def unit(wl: str) -> str:
    if wl.startswith("seq_"):
        return "µs/turn"
    if wl.startswith("fanout"):
        return "µs/call"
    return "ms wall"


def best_peer(results: Dict[str, Any], wl: str, key: Callable[[float], float] = lambda v: v) -> Optional[float]:
    vals = [figure(results, wl, p) for p in PEERS]
    vals = [key(v) for v in vals if v is not None]
    return min(vals) if vals else None


def fmt(v: Optional[float]) -> str:
    if v is None:
        return "–"
    if v >= 100:
        return f"{v:,.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def table(results: Dict[str, Any]) -> str:
    rows = [("workload", "unit", "ours", PYD, OAI, "best-peer/ours")]
    for wl in results:
        ours = figure(results, wl, OURS)
        peer_wl = "fanout_def" if wl == "fanout_def_blocking" else wl
        best = best_peer(results, peer_wl)
        ratio = f"{best / ours:,.1f}×" if (best is not None and ours) else "–"
        label = wl + (" (peers: async run)" if wl == "fanout_def_blocking" else "")
        rows.append((label, unit(wl), fmt(ours), fmt(figure(results, peer_wl, PYD)),
                     fmt(figure(results, peer_wl, OAI)), ratio))
        if wl == "sleepy" and ours is not None and best is not None:
            o, b = ours - SLEEP_S * 1000, best - SLEEP_S * 1000
            rows.append(("sleepy overhead (wall - 50 ms)", "ms", fmt(o), fmt(figure(results, wl, PYD) - 50 if figure(results, wl, PYD) else None),
                         fmt(figure(results, wl, OAI) - 50 if figure(results, wl, OAI) else None),
                         f"{b / o:,.1f}×" if o > 0 else "∞"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for j, r in enumerate(rows):
        lines.append("  ".join(c.ljust(widths[i]) if i < 2 else c.rjust(widths[i]) for i, c in enumerate(r)))
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def targets(results: Dict[str, Any], floor_ms: Optional[float] = None) -> List[Dict[str, Any]]:
    out: List[Dict[str, Any]] = []

    def add(name: str, value: Optional[float], limit: str, met: Optional[bool]) -> None:
        out.append({"target": name, "value": None if value is None else round(value, 2), "limit": limit,
                    "met": met})

    def absolute(wl: str, limit: float, what: str) -> None:
        v = figure(results, wl, OURS)
        add(f"{wl}: {what}", v, f"<= {limit}", None if v is None else v <= limit)

    absolute("fanout_def", 30, "µs/call (def tool, run_async)")
    absolute("fanout_async", 14, "µs/call (async def tool)")
    lo, hi = (f"seq_{min(SEQ_SIZES)}", f"seq_{max(SEQ_SIZES)}") if SEQ_SIZES else (None, None)
    if lo and hi and lo != hi:
        a, b = figure(results, lo, OURS), figure(results, hi, OURS)
        v = None if (a is None or b is None) else b / a
        add(f"sequential growth: per-turn {hi} / per-turn {lo}", v, "<= 1.5", None if v is None else v <= 1.5)
    absolute("sleepy", 53, "wall ms")
    for wl in results:
        if wl in ("empty", "fanout_def_blocking"):
            continue
        ours, best = figure(results, wl, OURS), best_peer(results, wl)
        if ours is None or best is None:
            continue
        if wl == "sleepy":
            # Wall time has a 50 ms floor for everyone, so 10x on wall is impossible by
            # construction. Overhead above 50 ms includes asyncio's own timer lateness
            # (bare asyncio.gather already needs ~1.6 ms more here), which no SDK can remove:
            # reported, not a target. The SDK's own cost is the wall above that floor.
            o, b = ours - SLEEP_S * 1000, best - SLEEP_S * 1000
            add("sleepy: best-peer overhead / ours above 50 ms (info: includes asyncio's timer lateness)",
                b / o if o > 0 else float("inf"), "info", None)
            if floor_ms is not None:
                o, b = ours - floor_ms, best - floor_ms
                v = b / o if o > 0 else float("inf")
                add("sleepy: best-peer overhead / ours above the bare-asyncio floor of this invocation", v,
                    ">= 10", v >= 10)
            continue
        v = best / ours
        add(f"{wl}: best peer / ours", v, ">= 10", v >= 10)
    return out


async def main() -> None:
    t0 = time.time()
    meta = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "python": platform.python_version(),
        "machine": platform.platform(),
        "cpus": os.cpu_count(),
        "load_before": open("/proc/loadavg").read().strip() if os.path.exists("/proc/loadavg") else None,
        "git": git_state(),
        "runs": RUNS, "warmup": WARMUP, "fanout_n": FANOUT_N, "seq_sizes": SEQ_SIZES, "sleepy_n": SLEEPY_N,
    }
    sys.stderr.write(f"load before: {meta['load_before']}\n")
    out = await run_all()
    meta["load_after"] = open("/proc/loadavg").read().strip() if os.path.exists("/proc/loadavg") else None
    meta["elapsed_s"] = round(time.time() - t0, 1)
    results = out["results"]
    floor = out.get("sleepy_floor")
    tg = targets(results, floor["median_ms"] if floor else None)
    print()
    print(f"Phaseo Agent SDK (Python) vs Python peers — median of {RUNS} runs after {WARMUP} warm-up; "
          f"load before {meta['load_before']}, after {meta['load_after']}")
    print(f"versions: {json.dumps(out['versions'])}; tree: {json.dumps(meta['git'])}")
    print()
    print(table(results))
    print()
    if out.get("sleepy_floor"):
        print(f"reference (no SDK): asyncio.gather of {SLEEPY_N} x asyncio.sleep({SLEEP_S * 1000:g} ms) = "
              f"{out['sleepy_floor']['median_ms']:.2f} ms wall in this invocation — the floor under every sleepy figure")
        print()
    print("Targets (ours):")
    for t in tg:
        mark = "MET " if t["met"] else ("MISS" if t["met"] is False else "info")
        print(f"  [{mark}] {t['target']}: {fmt(t['value'])} (target {t['limit']})")
    print()
    print("JSON:")
    print(json.dumps({"meta": meta, "versions": out["versions"], "results": results,
                      "sleepy_asyncio_floor": out.get("sleepy_floor"), "targets": tg},
                     separators=(",", ":")))


if __name__ == "__main__":
    asyncio.run(main())
