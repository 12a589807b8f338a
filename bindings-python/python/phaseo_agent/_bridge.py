"""Where coroutines of tools and hooks run: the caller's loop for ``*_async`` entry
points, a background loop thread for blocking ones. Called by the native module."""

from __future__ import annotations

import asyncio
import os
import threading
from concurrent.futures import Future
from typing import Any, Awaitable, Callable, Optional

_lock = threading.Lock()
_loop: Optional[asyncio.AbstractEventLoop] = None
_pid: Optional[int] = None


def background_loop() -> asyncio.AbstractEventLoop:
    """The process's background event loop (started on first use, and again after fork)."""
    global _loop, _pid
    with _lock:
        if _loop is None or _loop.is_closed() or _pid != os.getpid():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="phaseo-agent-asyncio", daemon=True)
            thread.start()
            _loop, _pid = loop, os.getpid()
        return _loop


async def _await(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def submit(awaitable: Any, loop: asyncio.AbstractEventLoop, done: Callable[[Future[Any]], None]) -> Future[Any]:
    """Runs an awaitable on ``loop`` from another thread; ``done`` is told when it ends."""
    coroutine = awaitable if asyncio.iscoroutine(awaitable) else _await(awaitable)
    future = asyncio.run_coroutine_threadsafe(coroutine, loop)
    future.add_done_callback(done)
    return future


def resolve(future: "asyncio.Future[Any]", ok: bool, value: Any) -> None:
    """Completes an awaitable of the native module (on its loop)."""
    if future.cancelled():
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)
