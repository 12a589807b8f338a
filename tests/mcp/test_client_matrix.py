"""MCP clients we did not write against tools served by every binding (docs/behaviour.md §19).

The official Python SDK client (tests/mcp/served_client.py) and the official TypeScript SDK
client (tests/mcp/ts_client.mjs) each run their ``check`` scenario against the same served
tools (add, slow, steps, delete, sleepy), written with each binding's serve API, over stdio
and Streamable HTTP. Over HTTP one server process per language serves both clients; over
stdio each client starts the server itself. Prints the client × transport × language
matrix and exits 1 when a cell failed.

    .venvs/py/bin/python tests/mcp/test_client_matrix.py [LANGUAGE...]

Needs ``make python node kotlin go-lib ruby csharp-test-build php mcp-servers`` (the
``mcp-client-matrix`` target; ``make mcp-handoff`` runs it too). A missing client package or
server program fails.
"""

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional, Tuple

ROOT = Path(__file__).resolve().parents[2]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")).resolve()
PYTHON = ROOT / ".venvs/py/bin/python"
CLIENTS = {
    "python": [str(PYTHON), str(ROOT / "tests/mcp/served_client.py")],
    "ts": ["node", str(ROOT / "tests/mcp/ts_client.mjs")],
}
TRANSPORTS = ("stdio", "http")


class Server(NamedTuple):
    """A served-tools program: its command per transport, the environment it needs, and
    what its ``add`` declares beyond the common tools (``--annotated``, ``--output-schema``)."""

    command: Dict[str, List[str]]
    env: Dict[str, Dict[str, str]]
    flags: List[str]


def jvm(main: str) -> Dict[str, List[str]]:
    kotlin = ROOT / "bindings-uniffi/kotlin/target"
    classpath = os.pathsep.join([str(kotlin / "classes"), str(kotlin / "test-classes"),
                                 (kotlin / "classpath.txt").read_text().strip()])
    java = ["java", f"-Djna.library.path={TARGET / 'debug'}", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            "-cp", classpath, main]
    return {t: java + [t] for t in TRANSPORTS}


def go_binary(work: Path) -> Path:
    """The Go binding's test binary, which serves the tools of bindings-go/serve_test.go
    (PHASEO_GO_SERVE_STDIO / PHASEO_GO_SERVE_HTTP)."""
    out = work / "go-serve.test"
    go = ROOT / "bindings-go"
    # As the Makefile's Go targets: the library's checksum as a linker flag, so a binary
    # linked with another build of the library is not reused.
    library = hashlib.sha256((go / "lib/linux_amd64/libphaseo_agent_c.a").read_bytes()).hexdigest()[:16]
    flags = subprocess.run(["go", "env", "GOFLAGS"], cwd=go, check=True, capture_output=True, text=True).stdout.strip()
    env = {**os.environ, "GOFLAGS": f"{flags} -ldflags=-X=github.com/phaseo/agent-sdk-go.linkedLibrary={library}".strip()}
    subprocess.run(["go", "test", "-c", "-o", str(out), "."], cwd=go, env=env, check=True)
    return out


def server(lang: str, go: Path) -> Server:
    """The served-tools program of `lang` (`go`: the Go test binary)."""
    php = ["php", "-n", "-d", f"extension={ROOT / 'bindings-php/php/phaseo_agent.so'}",
           str(ROOT / "bindings-php/tests/fixtures/served_tools.php")]
    mono = ["mono", str(TARGET / "dotnet/Phaseo.AgentSdk.TestWorker.exe")]
    native = {"LD_LIBRARY_PATH": str(TARGET / "debug")}
    go_cmd = [str(go), "-test.run=^$"]
    table = {
        "python": lambda: Server({t: [str(PYTHON), str(ROOT / "bindings-python/tests/mcp_served_tools.py"), t] for t in TRANSPORTS},
                         {}, ["--annotated", "--output-schema"]),
        "node": lambda: Server({t: ["node", str(ROOT / "bindings-node/test-fixtures/served-tools.mjs"), t] for t in TRANSPORTS},
                       {}, ["--annotated", "--output-schema"]),
        "go": lambda: Server({t: go_cmd for t in TRANSPORTS},
                     {"stdio": {"PHASEO_GO_SERVE_STDIO": "tools"}, "http": {"PHASEO_GO_SERVE_HTTP": "tools"}},
                     ["--annotated"]),
        "ruby": lambda: Server({t: ["ruby", str(ROOT / "bindings-ruby/test/mcp_served_tools.rb"), t] for t in TRANSPORTS},
                       {}, ["--annotated", "--output-schema"]),
        "php": lambda: Server({t: php + [t] for t in TRANSPORTS}, {}, ["--annotated", "--output-schema"]),
        "csharp": lambda: Server({t: mono + [f"serve-{t}"] for t in TRANSPORTS}, {t: native for t in TRANSPORTS},
                                 ["--annotated", "--output-schema"]),
        "kotlin": lambda: Server(jvm("app.phaseo.agent.mcp.ServedToolsKt"), {}, ["--annotated", "--output-schema"]),
        "java": lambda: Server(jvm("app.phaseo.agent.javaapi.ServedToolsJava"), {}, ["--annotated", "--output-schema"]),
    }
    return table[lang]()


class Cell(NamedTuple):
    ok: bool
    passed: int
    failed: List[str]
    detail: str


def run_client(client: str, flags: List[str], mark: Path, target: List[str], env: Dict[str, str]) -> Cell:
    command = CLIENTS[client] + ["check", "none", "--mark", str(mark)] + flags + target
    try:
        done = subprocess.run(command, env={**os.environ, **env}, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return Cell(False, 0, ["(timeout)"], "the client did not finish in 300 s")
    lines = done.stdout.strip().splitlines()
    try:
        seen = json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        return Cell(False, 0, ["(no result)"], f"exit {done.returncode}\n{done.stdout}\n{done.stderr}")
    failed = [f["check"] for f in seen.get("failed", [])]
    ok = done.returncode == 0 and not failed and bool(seen.get("passed"))
    detail = "" if ok else f"exit {done.returncode}: {json.dumps(seen.get('failed'))}\n{done.stderr[-3000:]}"
    return Cell(ok, len(seen.get("passed", [])), failed, detail)


def run_cell(lang: str, server: Server, transport: str, work: Path) -> Dict[str, Cell]:
    """Both clients against one language's server over one transport."""
    mark = work / f"{lang}-{transport}.cancelled"
    env = server.env.get(transport, {})
    cells: Dict[str, Cell] = {}
    if transport == "stdio":
        for client in CLIENTS:
            cells[client] = run_client(client, server.flags, mark, ["--"] + server.command[transport], env)
        return cells
    proc = subprocess.Popen(server.command[transport], env={**os.environ, **env, "CANCEL_MARK": str(mark)},
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        for client in CLIENTS:
            if url.startswith("http://127.0.0.1:"):
                cells[client] = run_client(client, server.flags, mark, ["--url", url], {})
            else:
                cells[client] = Cell(False, 0, ["(no server)"], f"the server printed {url!r} (exit {proc.poll()})")
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return cells


def matrix(languages: Optional[List[str]] = None) -> Tuple[bool, str]:
    """Runs every cell; whether all passed and the printed matrix."""
    for path in (PYTHON, ROOT / ".venvs/py/.mcp", ROOT / "tests/mcp/node_modules/@modelcontextprotocol/sdk"):
        if not path.exists():
            return False, f"FAIL {path} is missing: run `make mcp-servers python`"
    with tempfile.TemporaryDirectory(prefix="phaseo-mcp-matrix-") as tmp:
        work = Path(tmp)
        go_built: Dict[str, Path] = {}
        go_error: List[str] = []

        def build_go() -> None:
            try:
                go_built["path"] = go_binary(work)
            except (subprocess.CalledProcessError, OSError) as e:
                go_error.append(str(e))

        wanted = languages or ["python", "node", "go", "ruby", "php", "csharp", "kotlin", "java"]
        builder = threading.Thread(target=build_go)
        if "go" in wanted:
            builder.start()
        jobs = [(lang, t) for lang in wanted for t in TRANSPORTS]
        results: Dict[Tuple[str, str], Dict[str, Cell]] = {}
        flags: Dict[str, List[str]] = {}

        def one(job: Tuple[str, str]) -> None:
            lang, transport = job
            if lang == "go":
                builder.join()
                if go_error:
                    results[job] = {c: Cell(False, 0, ["(build)"], go_error[0]) for c in CLIENTS}
                    return
            try:
                program = server(lang, work / "go-serve.test")
            except OSError as e:
                results[job] = {c: Cell(False, 0, ["(no server program)"], str(e)) for c in CLIENTS}
                return
            flags[lang] = program.flags
            results[job] = run_cell(lang, program, transport, work)

        # Most of a cell's time is spent waiting (process starts, the 200 ms timeout, the
        # cancellation's round trip): three at a time keep two cores busy.
        with ThreadPoolExecutor(max_workers=3) as pool:
            list(pool.map(one, jobs))

    columns = [(c, t) for t in TRANSPORTS for c in CLIENTS]
    lines = ["MCP client x transport x language (checks passed, or FAIL and the failed checks)",
             f"{'language':<10}" + "".join(f"{c + ' client/' + t:>22}" for c, t in columns) + "  also checked"]
    ok = True
    details: List[str] = []
    for lang in wanted:
        row = f"{lang:<10}"
        for client, transport in columns:
            cell = results[(lang, transport)][client]
            row += f"{('ok ' + str(cell.passed)) if cell.ok else 'FAIL':>22}"
            if not cell.ok:
                ok = False
                details.append(f"FAIL {lang} / {transport} / {client} client: {', '.join(cell.failed)}\n{cell.detail}")
        lines.append(row + "  " + " ".join(flags.get(lang, [])))
    return ok, "\n".join(lines + details)


def test_client_matrix() -> None:
    ok, printed = matrix()
    print(printed)
    assert ok, printed


if __name__ == "__main__":
    passed, text = matrix(sys.argv[1:] or None)
    print(text, flush=True)
    sys.exit(0 if passed else 1)
