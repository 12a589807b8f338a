"""The MCP client of the docs' serving examples (docs/examples/served/): starts one example
as a stdio MCP server with the official MCP Python SDK (PyPI ``mcp``, in the dev venv),
lists its tools and calls ``lookup-order``, printing what it saw for scripts/docs-test.sh
to compare with docs/examples/served/<name>.out.

    python scripts/docs-mcp-client.py COMMAND [ARG...]
"""

import json
import os
import sys

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client


async def main(command: list) -> None:
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            info = await session.initialize()
            print(f"server: {info.server_info.name}")
            tools = (await session.list_tools()).tools
            print("tools: " + ", ".join(sorted(t.name for t in tools)))
            arguments = {"order": "A-7"}
            result = await session.call_tool("lookup-order", arguments)
            texts = [b.text for b in result.content if isinstance(b, types.TextContent)]
            # The same value whichever language served it: keys sorted, one line.
            value = result.structured_content if result.structured_content is not None else json.loads(texts[0])
            print(f"lookup-order {json.dumps(arguments)} -> {json.dumps(value, sort_keys=True)}"
                  + (" (error)" if result.is_error else ""))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: docs-mcp-client.py COMMAND [ARG...]")
    anyio.run(main, sys.argv[1:])
