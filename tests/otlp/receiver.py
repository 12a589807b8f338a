"""A real OTLP/HTTP trace receiver for the tracing tests, on 127.0.0.1.

Accepts ``POST /v1/traces`` (protobuf), decodes it with ``opentelemetry-proto`` and keeps
the spans. Imported by the Python tests (:class:`Receiver`); run as a script by the Node,
Kotlin and handoff tests: it prints ``PORT <n>`` and serves the spans it got as JSON at
``GET /spans`` until its stdin closes.
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


def _value(v: AnyValue) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [_value(x) for x in v.array_value.values]
    return getattr(v, kind) if kind else None


def _span_dict(span: Any, service: str, headers: Dict[str, str]) -> Dict[str, Any]:
    return {
        "name": span.name,
        "traceId": span.trace_id.hex(),
        "spanId": span.span_id.hex(),
        "parentSpanId": span.parent_span_id.hex(),
        "kind": span.kind,
        "attributes": {kv.key: _value(kv.value) for kv in span.attributes},
        "links": [{"traceId": l.trace_id.hex(), "spanId": l.span_id.hex()} for l in span.links],
        "status": span.status.code,
        "start": span.start_time_unix_nano,
        "end": span.end_time_unix_nano,
        "service": service,
        "headers": headers,
    }


class Receiver:
    """The receiver; ``url`` is its base (``http://127.0.0.1:<port>``)."""

    def __init__(self) -> None:
        self.spans: List[Dict[str, Any]] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                if self.path != "/v1/traces" or self.headers.get("content-type") != "application/x-protobuf":
                    self.send_response(400)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                headers = {k.lower(): v for k, v in self.headers.items()}
                got = []
                for rs in request.resource_spans:
                    service = next((_value(kv.value) for kv in rs.resource.attributes
                                    if kv.key == "service.name"), "")
                    for ss in rs.scope_spans:
                        got.extend(_span_dict(s, service, headers) for s in ss.spans)
                with receiver._lock:
                    receiver.spans.extend(got)
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                with receiver._lock:
                    body = json.dumps(receiver.spans).encode()
                self.send_response(200 if self.path == "/spans" else 404)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def trace(self, trace_id: str) -> List[Dict[str, Any]]:
        with self._lock:
            return [s for s in self.spans if s["traceId"] == trace_id]

    def all_spans(self) -> List[Dict[str, Any]]:
        """Every span received so far, in the order they arrived."""
        with self._lock:
            return list(self.spans)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


if __name__ == "__main__":
    r = Receiver()
    print(f"PORT {r.url.rsplit(':', 1)[1]}", flush=True)
    sys.stdin.read()  # serve until the parent closes our stdin (or dies)
    r.close()
