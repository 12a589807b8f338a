"""The official Python `mcp` client calling the test server's trivial tool directly over
stdio: the baseline of the core's MCP latency benchmark (core/examples/mcp_latency.rs).

Usage: python python_client.py CALLS  → prints one JSON line {"calls", "mean_us", "median_us",
"concurrent_100_ms"}.
"""

import json
import statistics
import sys
import time
from pathlib import Path

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

SERVER = Path(__file__).resolve().parents[2] / "tests" / "mcp" / "test_server.py"


async def main(calls: int) -> None:
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for _ in range(20):
                await session.call_tool("echo", {"text": "warm"})
            times = []
            for i in range(calls):
                start = time.perf_counter()
                await session.call_tool("echo", {"text": f"hi {i}"})
                times.append((time.perf_counter() - start) * 1e6)

            async def one(i: int) -> None:
                await session.call_tool("echo", {"text": f"c {i}"})

            start = time.perf_counter()
            async with anyio.create_task_group() as tg:
                for i in range(100):
                    tg.start_soon(one, i)
            concurrent_ms = (time.perf_counter() - start) * 1e3
    print(
        json.dumps(
            {
                "calls": calls,
                "mean_us": round(statistics.mean(times)),
                "median_us": round(statistics.median(times)),
                "concurrent_100_ms": round(concurrent_ms, 1),
            }
        )
    )


if __name__ == "__main__":
    anyio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else 200)
