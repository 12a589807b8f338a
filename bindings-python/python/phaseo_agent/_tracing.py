"""Tracing (OpenTelemetry GenAI spans of every run, exported over OTLP HTTP/protobuf).

The spans are made by the SDK's core; this module only switches them on and, when the
application uses ``opentelemetry-api`` itself, hands the core the current span so a run
becomes its child. ``opentelemetry-api`` is optional: without it runs start root spans.
"""

from __future__ import annotations

import atexit as _atexit
from typing import Dict, Optional

from . import _native

_exit_hook = False


def enable_tracing(endpoint: Optional[str] = None, headers: Optional[Dict[str, str]] = None,
                   service_name: Optional[str] = None, capture_content: bool = False) -> None:
    """Records a span tree per run (``invoke_agent``, ``chat``, ``execute_tool``) and exports it.

    Unset options come from the standard variables (``OTEL_EXPORTER_OTLP_ENDPOINT``,
    ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, ``OTEL_EXPORTER_OTLP_HEADERS``,
    ``OTEL_SERVICE_NAME``). ``capture_content`` records tool arguments and results and the
    model's messages (off: they may hold personal data). Remaining spans are exported when
    the interpreter exits; call :func:`flush_tracing` to export earlier.
    """
    global _exit_hook
    _native.enable_tracing(endpoint, headers, service_name, capture_content)
    if not _exit_hook:
        _exit_hook = True
        _atexit.register(_shutdown_quietly)


def flush_tracing() -> None:
    """Exports every span ended so far and waits for the collector's answer."""
    _native.flush_tracing()


def shutdown_tracing() -> None:
    """Exports what is left and turns tracing off."""
    _native.shutdown_tracing()


def _shutdown_quietly() -> None:
    try:
        _native.shutdown_tracing()
    except RuntimeError:
        pass  # an unreachable collector must not fail the interpreter's exit


def _current_traceparent() -> Optional[str]:
    """The W3C ``traceparent`` of ``opentelemetry-api``'s current span, if any."""
    try:
        from opentelemetry import trace
    except ImportError:
        return None
    ctx = trace.get_current_span().get_span_context()
    if not ctx.is_valid:
        return None
    return f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{int(ctx.trace_flags):02x}"
