"""Runs one tracing example of the docs (docs/examples/<lang>/tracing…) against a real
OTLP/HTTP receiver on 127.0.0.1 (tests/otlp/receiver.py, in this process), then prints what
the example printed followed by the spans the receiver got, as a tree (children in the
order they started), for scripts/docs-test.sh to compare with docs/examples/tracing.out.

    python scripts/docs-trace-run.py COMMAND [ARG...]

The example is given the receiver through OTEL_EXPORTER_OTLP_ENDPOINT, as a deployment
gives it a collector. Needs opentelemetry-proto (`make .venvs/py/.otel`)."""

import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "otlp"))
from receiver import Receiver  # noqa: E402


def tree(spans: List[Dict[str, Any]]) -> List[str]:
    ids = {s["spanId"] for s in spans}
    children: Dict[str, List[Dict[str, Any]]] = {}
    for s in spans:
        parent = s["parentSpanId"] if s["parentSpanId"] in ids else ""
        children.setdefault(parent, []).append(s)
    lines: List[str] = []

    def walk(parent: str, depth: int) -> None:
        for s in sorted(children.get(parent, []), key=lambda s: (s["start"], s["name"])):
            status = s["attributes"].get("phaseo.run.status")
            lines.append("  " * depth + s["name"] + (f" (phaseo.run.status={status})" if status else ""))
            walk(s["spanId"], depth + 1)

    walk("", 0)
    return lines


def main(command: List[str]) -> int:
    receiver = Receiver()
    try:
        env = dict(os.environ, OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url)
        for name in ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SERVICE_NAME"):
            env.pop(name, None)
        done = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        sys.stdout.write(done.stdout)
        if done.returncode != 0:
            return done.returncode
        # Every example flushes (or shuts tracing down) before it ends: its spans are here.
        spans = receiver.all_spans()
        services = sorted({s["service"] for s in spans})
        print(f"spans received by the collector (service.name: {', '.join(services) or '-'}):")
        print("\n".join(tree(spans)))
        return 0
    finally:
        receiver.close()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: docs-trace-run.py COMMAND [ARG...]")
    sys.exit(main(sys.argv[1:]))
