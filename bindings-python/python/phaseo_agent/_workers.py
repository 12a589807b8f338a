"""The worker threads of synchronous (``def``) executors. Called by the native module,
which queues the calls and limits how many run at once.

The executor is called here, from Python, so that no native frame is on the thread's
stack while it runs: an executor that timed out, ignores ``runtime.cancelled`` and is
still running when the interpreter exits then ends like any daemon thread."""

from __future__ import annotations

import threading

from . import _native


def start() -> None:
    """Starts one worker thread (a daemon: interpreter exit does not wait for it)."""
    threading.Thread(target=work, name="phaseo-py-worker", daemon=True).start()


def work() -> None:
    """Runs calls until the native pool lets the thread go."""
    while True:
        call = _native._next_call()
        if call is None:
            return
        func, args, done = call
        del call
        try:
            value = func(*args)
        except BaseException as exc:  # the executor's outcome, whatever it raised
            del func, args
            done(False, exc)
            del exc
        else:
            del func, args
            done(True, value)
            del value
        del done
