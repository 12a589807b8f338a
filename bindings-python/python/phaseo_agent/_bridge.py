"""Where coroutines of tools and hooks run: the caller's loop for ``*_async`` entry
points, a background loop thread for blocking ones. Called by the native module."""

from __future__ import annotations

import asyncio
import contextvars
import socket
import sys
import weakref
import os
import threading
from concurrent.futures import Future
from typing import Any, Awaitable, Callable, Optional

_lock = threading.Lock()
_EAGER = sys.version_info >= (3, 12)
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


async def _task(awaitable: Awaitable[Any], done: Callable[[bool, Any], None]) -> None:
    try:
        value = await awaitable
    except BaseException as exc:
        done(False, exc)
        if isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt, SystemExit)):
            raise  # cancellation and host interrupts keep their asyncio meaning
        # Any other exception, whatever its class, is the call's error, reported above.
    else:
        done(True, value)


def _task_runner(loop: asyncio.AbstractEventLoop) -> Callable[[Awaitable[Any], Callable[[bool, Any], None]], "asyncio.Task[None]"]:
    """``run(awaitable, done)``: runs a callback's awaitable as a task of ``loop``; ``done``
    gets its outcome. On a standard loop without a task factory the task is built directly,
    as ``BaseEventLoop.create_task`` would build it."""
    direct = isinstance(loop, asyncio.BaseEventLoop) and type(loop).create_task is asyncio.BaseEventLoop.create_task
    task_class: Any = asyncio.Task
    loop_ref = weakref.ref(loop)  # the bridge must not keep its loop alive

    def run(awaitable: Awaitable[Any], done: Callable[[bool, Any], None]) -> "asyncio.Task[None]":
        loop = loop_ref()
        if loop is None:
            raise RuntimeError("the event loop is gone")
        if direct and loop._task_factory is None:  # type: ignore[attr-defined]
            if _EAGER:
                # Python 3.12+: the task's first step runs now, as the current task; a tool
                # that finishes without suspending never waits for a loop iteration.
                return task_class(_task(awaitable, done), loop=loop, eager_start=True)  # type: ignore[no-any-return]
            return task_class(_task(awaitable, done), loop=loop)  # type: ignore[no-any-return]
        return loop.create_task(_task(awaitable, done))

    return run


_bridges: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any]" = weakref.WeakKeyDictionary()


def bridge_for(loop: asyncio.AbstractEventLoop) -> Any:
    """The native bridge of ``loop`` (created once per loop): Rust queues calls for the
    loop and writes one byte to a socket the loop reads; the loop then takes the batch."""
    with _lock:
        # Loops closed without being collected (their runs or tasks still refer to them):
        # close their bridges now, which drops what they still hold.
        for closed in [known for known in list(_bridges.keys()) if known.is_closed()]:
            _close(*_bridges.pop(closed))
        entry = _bridges.get(loop)
        if entry is None:
            from . import _native

            reader, writer = socket.socketpair()
            reader.setblocking(False)
            writer.setblocking(False)
            bridge = _native.LoopBridge(writer.fileno(), _task_runner(loop))

            def drain() -> None:
                # Rust writes one byte per batch; a rare leftover byte wakes the loop again.
                try:
                    reader.recv(4096)
                except (BlockingIOError, InterruptedError):
                    pass
                bridge.drain()

            def register() -> None:
                # Scheduled from another thread: the bridge may have been closed meanwhile
                # (its loop collected, or the interpreter exiting), its socket with it.
                if reader.fileno() < 0:
                    return
                # In an empty context: the context of whoever created the bridge must not
                # leak into the callbacks of other runs (asyncio copies the current one).
                contextvars.Context().run(loop.add_reader, reader.fileno(), drain)

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
            weakref.finalize(loop, _close, bridge, reader, writer)
        return entry[0]


def _close(bridge: Any, reader: socket.socket, writer: socket.socket) -> None:
    """When a loop is collected: its runs are dropped, its wake-up sockets closed."""
    bridge.close()
    reader.close()
    writer.close()


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
