"""Where coroutines of tools and hooks run: the caller's loop for ``*_async`` entry
points, a background loop thread for blocking ones. Called by the native module."""

from __future__ import annotations

import asyncio
import socket
import weakref
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


_bridges: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any]" = weakref.WeakKeyDictionary()


def bridge_for(loop: asyncio.AbstractEventLoop) -> Any:
    """The native bridge of ``loop`` (created once per loop): Rust queues calls for the
    loop and writes one byte to a socket the loop reads; the loop then takes the batch."""
    with _lock:
        entry = _bridges.get(loop)
        if entry is None:
            from . import _native

            reader, writer = socket.socketpair()
            reader.setblocking(False)
            writer.setblocking(False)
            bridge = _native.LoopBridge(loop, writer.fileno())

            def drain() -> None:
                try:
                    while reader.recv(4096):
                        pass
                except (BlockingIOError, InterruptedError):
                    pass
                bridge.drain()

            def register() -> None:
                loop.add_reader(reader.fileno(), drain)

            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is loop:
                register()
            else:
                loop.call_soon_threadsafe(register)
            entry = (bridge, reader, writer)
            _bridges[loop] = entry
            weakref.finalize(loop, bridge.close)
        return entry[0]


def background_bridge() -> Any:
    """The bridge of the background loop (blocking entry points)."""
    return bridge_for(background_loop())


def resolve(future: "asyncio.Future[Any]", ok: bool, value: Any) -> None:
    """Completes an awaitable of the native module (on its loop)."""
    if future.cancelled():
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)
