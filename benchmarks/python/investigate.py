"""Where does our SDK's time go in the Python workloads of bench.py? Probes, our SDK only.

    .venvs/bench-py/bin/python benchmarks/python/investigate.py [probe ...]

Checked against the binding as of 91f8d78: async executors run as tasks on the run's
asyncio loop, started in batches by a per-loop bridge (9ccffdf, 4497114); `def` executors
run on a pool of at most 40 worker threads that stay attached to the interpreter (6a6116c).

  scaling      µs/call of fan-out (def / async def; run_async / run) at N = 1 .. 2000
  concurrency  fan-out 1000 at tool_concurrency 1 .. 1000
  switch       fan-out 1000 with sys.setswitchinterval 5 ms (default) / 0.1 ms / 50 ms
  threads      OS threads before/during/after a def fan-out
  seq          per-turn µs of sequential runs, 25 .. 800 turns, def vs async def tool
  onloop       a def tool run on the loop thread in the bridge's batches (emulated: the
               native Tool registered with execute_is_async=True) vs the worker threads,
               fan-out and sequential
  sleepy       timeline of the sleepy workload at N = 1 .. 300 (before the first coroutine
               starts, start skew, timer + completion, tail) against asyncio.gather of the same sleeps
  floors       pure-Python per-coroutine floors on this machine: stepped by hand, gather,
               create_task, and submission from another thread (per call vs one batch)
  cprofile     cProfile of the event-loop thread during one async fan-out
  pinned       def fan-out before/after keeping a PyThreadState alive on each executor
               thread (emulated with a leaked PyGILState_Ensure; irreversible, runs last).
               Before 6a6116c this halved the def cost; the worker pool now does it, so
               expect no difference

Default: all, in that order. Same timing method as bench.py (median of RUNS, gc before each).
"""
from __future__ import annotations

import asyncio
import cProfile
import gc
import io
import json
import os
import pstats
import statistics
import sys
import threading
import time
from typing import Any, Awaitable, Callable, Dict, List

import phaseo_agent as pa
from phaseo_agent import _native

RUNS = int(os.environ.get("RUNS", 5))
INTS = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}
counter = {"n": 0}


def add(tool_input: Dict[str, Any], runtime: Any) -> int:
    counter["n"] += 1
    return tool_input["a"] + tool_input["b"]


async def add_async(tool_input: Dict[str, Any], runtime: Any) -> int:
    counter["n"] += 1
    return tool_input["a"] + tool_input["b"]


def native_tool(fn: Callable[..., Any], execute_is_async: bool) -> Any:
    """A tool built with the native constructor, to choose how the executor is run."""
    return _native.Tool("add", "", INTS, fn, execute_is_async, None, None, None, None, None, None, None,
                        None, None, None)


TOOLS: Dict[str, Any] = {
    "def": pa.define_tool(pa.AgentTool(id="add", parameters=INTS, execute=add)),
    "async": pa.define_tool(pa.AgentTool(id="add", parameters=INTS, execute=add_async)),
    # a plain def registered as "async": the bridge calls it on the loop thread, in batches
    "def-on-loop": native_tool(add, True),
}


def fanout_script(n: int) -> List[Dict[str, Any]]:
    calls = [{"id": f"c{i}", "name": "add", "arguments": json.dumps({"a": i, "b": 1})} for i in range(n)]
    return [{"tool_calls": calls}, {"text": "done"}]


def seq_script(n: int) -> List[Dict[str, Any]]:
    return [{"tool_calls": [{"id": f"c{i}", "name": "add", "arguments": json.dumps({"a": i, "b": 1})}]}
            for i in range(n)] + [{"text": "done"}]


def agent(kind: str, concurrency: int = 1000, max_steps: int = 5) -> pa.Agent:
    return pa.create_agent({"id": "probe", "instructions": "bench", "tools": [TOOLS[kind]], "max_steps": max_steps,
                            "tool_execution": {"tool_concurrency": concurrency}})


def threads_now() -> int:
    with open("/proc/self/status") as f:
        for ln in f:
            if ln.startswith("Threads:"):
                return int(ln.split()[1])
    return -1


async def timed(kind: str, script: Callable[[], List[Dict[str, Any]]], expected: int, *, blocking: bool = False,
                concurrency: int = 1000, max_steps: int = 5, runs: int = RUNS) -> Dict[str, float]:
    """Median wall ms and process-CPU ms (all threads) of `runs` runs after 1 warm-up."""
    walls, cpus = [], []
    for i in range(runs + 1):
        a = agent(kind, concurrency, max_steps)
        client = pa.ScriptedClient(script())
        counter["n"] = 0
        gc.collect()
        c0, t0 = time.process_time_ns(), time.perf_counter_ns()
        if blocking:
            r = a.run(input="go", client=client)
        else:
            r = await a.run_async(input="go", client=client)
        t1, c1 = time.perf_counter_ns(), time.process_time_ns()
        assert r.output == "done" and counter["n"] == expected, (r.status, r.error, counter["n"])
        if i:
            walls.append((t1 - t0) / 1e6)
            cpus.append((c1 - c0) / 1e6)
    return {"wall_ms": statistics.median(walls), "cpu_ms": statistics.median(cpus)}


def line(label: str, res: Dict[str, float], n: int, what: str = "call") -> None:
    print(f"  {label:<46} wall {res['wall_ms'] * 1000 / n:8.1f} µs/{what}   cpu {res['cpu_ms'] * 1000 / n:8.1f} µs/{what}"
          f"   (total {res['wall_ms']:.2f} ms)", flush=True)


async def p_scaling() -> None:
    print("scaling: fan-out µs/call by N (tool_concurrency 1000)")
    for kind in ("def", "async"):
        for blocking in (False, True):
            for n in (1, 10, 100, 250, 500, 1000, 2000):
                res = await timed(kind, lambda: fanout_script(n), n, blocking=blocking)
                line(f"{kind:<5} {'run()' if blocking else 'run_async()':<12} N={n}", res, n)


async def p_concurrency() -> None:
    print("concurrency: fan-out 1000 by tool_concurrency")
    for kind in ("def", "async"):
        for c in (1, 2, 4, 8, 64, 1000):
            res = await timed(kind, lambda: fanout_script(1000), 1000, concurrency=c)
            line(f"{kind:<5} run_async() concurrency={c}", res, 1000)


async def p_switch() -> None:
    print("switch: fan-out 1000 by sys.setswitchinterval (GIL hand-off latency)")
    old = sys.getswitchinterval()
    try:
        for interval in (0.005, 0.0001, 0.05):
            sys.setswitchinterval(interval)
            for kind in ("def", "async"):
                res = await timed(kind, lambda: fanout_script(1000), 1000)
                line(f"{kind:<5} run_async() switchinterval={interval * 1000:g} ms", res, 1000)
    finally:
        sys.setswitchinterval(old)


async def p_threads() -> None:
    print("threads: OS threads around a def fan-out of 1000 (peak sampled inside the tool)")
    peak = {"t": 0}

    def add_sampling(tool_input: Dict[str, Any], runtime: Any) -> int:
        counter["n"] += 1
        peak["t"] = max(peak["t"], threads_now())
        return tool_input["a"] + tool_input["b"]

    tool = pa.define_tool(pa.AgentTool(id="add", parameters=INTS, execute=add_sampling))
    for run in range(2):
        a = pa.create_agent({"id": "p", "tools": [tool], "tool_execution": {"tool_concurrency": 1000}})
        counter["n"], peak["t"] = 0, 0
        before = threads_now()
        await a.run_async(input="go", client=pa.ScriptedClient(fanout_script(1000)))
        print(f"  run {run}: threads before {before}, peak during {peak['t']}, after {threads_now()}")


async def p_seq() -> None:
    print("seq: per-turn µs by number of turns")
    for kind in ("def", "async"):
        for n in (25, 100, 200, 400, 800):
            res = await timed(kind, lambda: seq_script(n), n, max_steps=n + 5)
            line(f"{kind:<5} run_async() turns={n}", res, n, "turn")


async def p_onloop() -> None:
    print("onloop: def tool on the worker threads (today) vs on the loop thread in the bridge's batches (emulated)")
    for blocking in (False, True):
        for kind in ("def", "def-on-loop", "async"):
            res = await timed(kind, lambda: fanout_script(1000), 1000, blocking=blocking)
            line(f"{kind:<11} fan-out 1000 {'run()' if blocking else 'run_async()'}", res, 1000)
    for kind in ("def", "def-on-loop", "async"):
        res = await timed(kind, lambda: seq_script(200), 200, max_steps=205)
        line(f"{kind:<11} sequential 200 run_async()", res, 200, "turn")


async def p_sleepy() -> None:
    print("sleepy: N x asyncio.sleep(50 ms) in one turn; when do the coroutines start and end (ms from run start)?")
    marks: Dict[str, List[float]] = {"start": [], "end": []}

    async def nap(tool_input: Dict[str, Any], runtime: Any) -> int:
        marks["start"].append(time.perf_counter())
        await asyncio.sleep(0.05)
        marks["end"].append(time.perf_counter())
        return tool_input["i"]

    async def bare(i: int) -> int:
        await asyncio.sleep(0.05)
        return i

    tool = pa.define_tool(pa.AgentTool(id="nap", parameters={"type": "object", "properties": {"i": {"type": "integer"}}},
                                       execute=nap))
    for n in (1, 10, 100, 300):
        rows = []
        for r in range(RUNS + 1):
            a = pa.create_agent({"id": "s", "tools": [tool], "tool_execution": {"tool_concurrency": 1000}})
            client = pa.ScriptedClient([{"tool_calls": [{"id": f"c{i}", "name": "nap", "arguments": json.dumps({"i": i})}
                                                        for i in range(n)]}, {"text": "done"}])
            marks["start"].clear()
            marks["end"].clear()
            gc.collect()
            t0 = time.perf_counter()
            await a.run_async(input="go", client=client)
            t1 = time.perf_counter()
            if r:
                rows.append((min(marks["start"]) - t0, max(marks["start"]) - t0, max(marks["end"]) - t0, t1 - t0))
        m = [statistics.median(x[i] for x in rows) * 1000 for i in range(4)]
        floor = []
        for r in range(RUNS + 1):
            gc.collect()
            t0 = time.perf_counter()
            await asyncio.gather(*(bare(i) for i in range(n)))
            if r:
                floor.append((time.perf_counter() - t0) * 1000)
        print(f"  N={n:<4} run {m[3]:6.2f} ms (asyncio.gather floor {statistics.median(floor):6.2f}) | before 1st start "
              f"{m[0]:.2f}, start skew {m[1] - m[0]:.2f}, last end - last start - 50 {m[2] - m[1] - 50:.2f}, "
              f"tail after last end {m[3] - m[2]:.2f}")


async def p_floors() -> None:
    print("floors: pure-Python per-coroutine costs on this machine (1000 trivial coroutines, median of RUNS)")
    loop = asyncio.get_running_loop()

    async def coro(i: int) -> int:
        return i + 1

    def med(fn: Callable[[], Any]) -> float:
        xs = []
        for r in range(RUNS + 1):
            gc.collect()
            t0 = time.perf_counter_ns()
            fn()
            if r:
                xs.append((time.perf_counter_ns() - t0) / 1000 / 1000)
        return statistics.median(xs)

    async def amed(fn: Callable[[], Awaitable[Any]]) -> float:
        xs = []
        for r in range(RUNS + 1):
            gc.collect()
            t0 = time.perf_counter_ns()
            await fn()
            if r:
                xs.append((time.perf_counter_ns() - t0) / 1000 / 1000)
        return statistics.median(xs)

    def plain_calls() -> None:
        for i in range(1000):
            add({"a": i, "b": 1}, None)

    def send_only() -> None:  # a coroutine that does not suspend, stepped by hand (no Task)
        for i in range(1000):
            c = coro(i)
            try:
                c.send(None)
            except StopIteration:
                pass

    async def gather() -> None:
        await asyncio.gather(*(coro(i) for i in range(1000)))

    async def tasks_with_callback() -> None:
        fut = loop.create_future()
        left = [1000]

        def cb(t: Any) -> None:
            t.result()
            left[0] -= 1
            if not left[0]:
                fut.set_result(None)

        for i in range(1000):
            loop.create_task(coro(i)).add_done_callback(cb)
        await fut

    def from_thread(kind: str) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            fut = loop.create_future()
            left = [1000]

            def cb(f: Any) -> None:
                f.result()
                left[0] -= 1
                if not left[0]:
                    loop.call_soon_threadsafe(lambda: fut.set_result(None))

            def submitter() -> None:
                if kind == "per-call":
                    for i in range(1000):
                        asyncio.run_coroutine_threadsafe(coro(i), loop).add_done_callback(cb)
                else:
                    coros = [coro(i) for i in range(1000)]

                    def start() -> None:
                        for c in coros:
                            loop.create_task(c).add_done_callback(cb)

                    loop.call_soon_threadsafe(start)

            t = threading.Thread(target=submitter)
            t.start()
            await fut
            t.join()

        return run

    def to_thread_pool() -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            await asyncio.gather(*(asyncio.to_thread(add, {"a": i, "b": 1}, None) for i in range(1000)))

        return run

    print(f"  def add(...) called directly                        {med(plain_calls):7.2f} µs")
    print(f"  coroutine stepped by hand (send, no Task)           {med(send_only):7.2f} µs")
    print(f"  asyncio.gather                                      {await amed(gather):7.2f} µs")
    print(f"  loop.create_task + add_done_callback                {await amed(tasks_with_callback):7.2f} µs")
    print(f"  from another thread, one call_soon_threadsafe/batch {await amed(from_thread('batch')):7.2f} µs")
    print(f"  from another thread, run_coroutine_threadsafe/call  {await amed(from_thread('per-call')):7.2f} µs")
    print(f"  asyncio.to_thread(def) gathered (the peers' path)   {await amed(to_thread_pool()):7.2f} µs")


async def p_cprofile() -> None:
    print("cprofile: event-loop thread during one run_async fan-out of 1000 async def calls (tottime)")
    a = agent("async")
    client = pa.ScriptedClient(fanout_script(1000))
    counter["n"] = 0
    prof = cProfile.Profile()
    prof.enable()
    await a.run_async(input="go", client=client)
    prof.disable()
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(12)
    print("\n".join("  " + ln for ln in s.getvalue().splitlines() if ln.strip()))


_pinned: set = set()


def pin_thread_state() -> None:
    """Leaks one PyGILState_Ensure on the current (non-Python) thread, so its PyThreadState
    survives pyo3's attach/release cycles instead of being created and destroyed (malloc,
    gettid, a 16 KiB frame-stack mmap/munmap on 3.11) on every attach."""
    import ctypes

    tid = threading.get_native_id()
    if tid not in _pinned:
        _pinned.add(tid)
        ctypes.pythonapi.PyGILState_Ensure.restype = ctypes.c_int
        ctypes.pythonapi.PyGILState_Ensure()


async def p_pinned() -> None:
    print("pinned: def fan-out / sequential before and after keeping a PyThreadState alive on the executor threads")
    before_f = await timed("def", lambda: fanout_script(1000), 1000)
    before_s = await timed("def", lambda: seq_script(200), 200, max_steps=205)

    def add_pin(tool_input: Dict[str, Any], runtime: Any) -> int:
        pin_thread_state()
        counter["n"] += 1
        return tool_input["a"] + tool_input["b"]

    TOOLS["def"] = pa.define_tool(pa.AgentTool(id="add", parameters=INTS, execute=add_pin))
    for _ in range(3):
        await timed("def", lambda: fanout_script(1000), 1000, runs=1)
    line("def fan-out 1000, unpinned", before_f, 1000)
    line(f"def fan-out 1000, pinned ({len(_pinned)} threads)", await timed("def", lambda: fanout_script(1000), 1000), 1000)
    line("def sequential 200, unpinned", before_s, 200, "turn")
    line("def sequential 200, pinned", await timed("def", lambda: seq_script(200), 200, max_steps=205), 200, "turn")


PROBES = {"scaling": p_scaling, "concurrency": p_concurrency, "switch": p_switch, "threads": p_threads,
          "seq": p_seq, "onloop": p_onloop, "sleepy": p_sleepy, "floors": p_floors, "cprofile": p_cprofile,
          "pinned": p_pinned}


async def main() -> None:
    names = sys.argv[1:] or list(PROBES)
    print(f"load: {open('/proc/loadavg').read().strip()}; threads at start: {threads_now()}; "
          f"switchinterval {sys.getswitchinterval() * 1000:g} ms")
    for name in names:
        await PROBES[name]()
    print(f"load: {open('/proc/loadavg').read().strip()}")


if __name__ == "__main__":
    asyncio.run(main())
