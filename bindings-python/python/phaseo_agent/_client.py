"""Host model clients that stream (docs/behaviour.md §8): how the native module reads a client's
``stream(request)``.

``stream(request)`` may be a generator, an async generator, or return either (or an
awaitable of one). It yields, in order::

    {"type": "text-delta", "delta": "..."}        # response.output_text.delta
    {"type": "reasoning-delta", "delta": "..."}   # response.reasoning.delta
    {"type": "tool-input-start", "tool_call_id": "...", "tool_name": "..."}  # tool.input_started
    {"type": "tool-input-delta", "tool_call_id": "...", "delta": "..."}      # tool.input_delta
    {"type": "item", "item": {...}}                # response.item (message, reasoning, tool_call, ...)
    {"type": "response", "response": {...}}        # the final response (last one wins)

A generator may instead ``return`` its final response. The product's spellings
(``response.output_text.delta``, ``response.reasoning.delta``, ``tool.input_started``,
``tool.input_delta``, ``response.item``, ``response.completed``) are accepted too. Each
event reaches the run as it is yielded.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any, Dict, List, Mapping, Optional

from . import _native


def drain(stream: Any, request: Any, sink: Any) -> Any:
    """Reads ``stream(request)`` into ``sink``; an asynchronous source becomes a coroutine
    the caller awaits on the run's loop."""
    produced = stream(request)
    if hasattr(produced, "__aiter__"):
        return _drain_async(produced, sink)
    if inspect.isawaitable(produced):
        return _await_then_drain(produced, sink)
    _drain_sync(produced, sink)
    return None


def _final(sink: Any, value: Optional[Any]) -> None:
    if value is not None:
        sink.send({"type": "response", "response": value})


def _drain_sync(produced: Any, sink: Any) -> None:
    if not hasattr(produced, "__next__"):
        _final(sink, produced)  # a plain response
        return
    try:
        while not sink.closed:
            try:
                event = next(produced)
            except StopIteration as stop:
                _final(sink, stop.value)
                return
            sink.send(event)
    finally:
        close = getattr(produced, "close", None)
        if callable(close):
            close()


async def _drain_async(produced: Any, sink: Any) -> None:
    try:
        async for event in produced:
            sink.send(event)
            if sink.closed:
                return
            # Back to the loop after each event: a stream that never awaits would otherwise
            # hold the loop, and with it every other callback of the run.
            await asyncio.sleep(0)
    finally:
        aclose = getattr(produced, "aclose", None)
        if callable(aclose):
            await aclose()


async def _await_then_drain(awaitable: Any, sink: Any) -> None:
    produced = await awaitable
    if hasattr(produced, "__aiter__"):
        await _drain_async(produced, sink)
    else:
        _drain_sync(produced, sink)


def is_async(fn: Any) -> bool:
    """Whether ``fn`` produces its stream asynchronously (then it runs on the run's loop;
    a synchronous one runs on a worker thread, as it may block between events)."""
    return inspect.isasyncgenfunction(fn) or inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(
        getattr(fn, "__call__", None)) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))


# The product's snake_case keys of ``client_options``, as the core spells them (other keys
# reach the core as given and are refused there by name).
_CLIENT_OPTION_KEYS = {"api_key": "apiKey", "base_url": "baseUrl", "timeout_ms": "timeoutMs", "fetch_impl": "fetchImpl"}


def _client_options(options: Optional[Mapping[str, Any]]) -> Optional[Dict[str, Any]]:
    if options is None:
        return None
    if not isinstance(options, Mapping):
        raise TypeError(f"client_options must be a dict, got {type(options).__name__}")
    return {_CLIENT_OPTION_KEYS.get(k, k): v for k, v in options.items()}


def _given(options: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in options.items() if v is not None}


def create_gateway_agent_client(
    *,
    api_key: Optional[str] = None,
    base_url: Optional[str] = None,
    model: Optional[str] = None,
    timeout_ms: Optional[float] = None,
    headers: Optional[Dict[str, str]] = None,
    client_options: Optional[Mapping[str, Any]] = None,
    preset: Optional[str] = None,
    provider: Optional[Mapping[str, Any]] = None,
    reasoning: Optional[Mapping[str, Any]] = None,
    temperature: Optional[float] = None,
    max_output_tokens: Optional[int] = None,
    parallel_tool_calls: Optional[bool] = None,
    metadata: Optional[Mapping[str, str]] = None,
    user: Optional[str] = None,
    response_format: Optional[Mapping[str, Any]] = None,
    include_meta: Optional[bool] = None,
    web_search_options: Optional[Mapping[str, Any]] = None,
    plugins: Optional[List[Any]] = None,
    tool_choice: Any = None,
    provider_options: Optional[Mapping[str, Any]] = None,
    prompt_cache_key: Optional[str] = None,
    request_options: Optional[Mapping[str, Any]] = None,
    client: Any = None,
) -> _native.HttpModelClient:
    """The Phaseo gateway client (``POST {base}/responses``), with the product's options.

    The key and base URL come from ``api_key``/``base_url`` or, as in the product,
    ``client_options={"api_key": ..., "base_url": ...}`` (also ``timeout_ms``,
    ``headers``), else from ``PHASEO_API_KEY``/``PHASEO_BASE_URL``. ``model`` is used when
    the agent names none, else ``@<preset>``. The body options (``provider``,
    ``reasoning``, ``temperature``, ``max_output_tokens``, ``parallel_tool_calls``,
    ``metadata``, ``user``, ``response_format``, ``include_meta`` → ``meta``,
    ``web_search_options``, ``plugins``, ``tool_choice``, ``provider_options``,
    ``prompt_cache_key``) and ``request_options`` (any other Responses body field) are sent
    unless the agent or run sets the same field: what the agent owns wins, then the named
    options, then ``request_options``; objects both set (``metadata``) are merged. The core
    checks every option (a wrong one raises ``AgentDefinitionError`` naming it).
    """
    return _native.http_client("gateway", _given({
        "apiKey": api_key, "baseUrl": base_url, "model": model, "timeoutMs": timeout_ms, "headers": headers,
        "clientOptions": _client_options(client_options), "preset": preset, "requestOptions": request_options,
        # An SDK instance is refused by the core (by key: the instance itself is not JSON).
        "client": None if client is None else {}, "provider": provider, "reasoning": reasoning, "temperature": temperature,
        "maxOutputTokens": max_output_tokens, "parallelToolCalls": parallel_tool_calls, "metadata": metadata,
        "user": user, "responseFormat": response_format, "includeMeta": include_meta,
        "webSearchOptions": web_search_options, "plugins": plugins, "toolChoice": tool_choice,
        "providerOptions": provider_options, "promptCacheKey": prompt_cache_key,
    }))


def create_openai_compatible_client(*, base_url: Optional[str] = None, api_key: Optional[str] = None,
                                    model: Optional[str] = None, timeout_ms: Optional[float] = None,
                                    headers: Optional[Dict[str, str]] = None) -> _native.HttpModelClient:
    """An OpenAI-compatible chat-completions client (``POST {base}/chat/completions``: OpenAI,
    vLLM, Ollama, llama.cpp, LM Studio); defaults from ``OPENAI_BASE_URL``/``OPENAI_API_KEY``."""
    return _native.http_client("openai-compatible", _given({
        "apiKey": api_key, "baseUrl": base_url, "model": model, "timeoutMs": timeout_ms, "headers": headers}))
