"""Run stores (docs/behaviour.md §10): where runs are kept between processes, so a pause can be
continued by run id from any worker, at most once, and a run whose worker died can be
recovered."""

from __future__ import annotations

import asyncio
import inspect
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from os import PathLike
from typing import Any, Iterable, List, Mapping, Optional, Union

from . import _native
from ._native import PendingToolCall, RunResult

__all__ = [
    "InMemoryRunStore",
    "PostgresRunStore",
    "RunPage",
    "RunStore",
    "SqliteRunStore",
    "StoredRun",
]

Statuses = Union[str, Iterable[str], None]


@dataclass(frozen=True)
class StoredRun:
    """One stored run: its row columns and its state (``pending``: the calls it waits on)."""

    run_id: str
    agent_id: str
    #: The row's status: the state's, except ``running`` once a pause has been claimed.
    status: str
    pause_id: Optional[str]
    version: int
    created_at_ms: int
    updated_at_ms: int
    lease_owner: Optional[str]
    lease_expires_at_ms: Optional[int]
    state: RunResult

    @property
    def pending(self) -> List[PendingToolCall]:
        """The pending calls of a waiting run (what an approval inbox shows)."""
        return self.state.pending


@dataclass(frozen=True)
class RunPage:
    """One page of :meth:`RunStore.list`; pass ``next_cursor`` as ``cursor`` for the next
    (None on the last page)."""

    runs: List[StoredRun]
    next_cursor: Optional[str]


def _statuses(status: Statuses) -> Optional[List[str]]:
    if status is None:
        return None
    if isinstance(status, str):
        return [status]
    return list(status)


def _cutoff_ms(older_than: Union[datetime, timedelta, float, int]) -> int:
    if isinstance(older_than, datetime):
        return int(older_than.timestamp() * 1000)
    if isinstance(older_than, timedelta):
        return int((time.time() - older_than.total_seconds()) * 1000)
    if isinstance(older_than, (int, float)) and not isinstance(older_than, bool):
        # A number is an age in seconds, like timedelta(seconds=n).
        return int((time.time() - float(older_than)) * 1000)
    raise TypeError(f"older_than must be a datetime, a timedelta or seconds, got {type(older_than).__name__}")


def _run(row: Mapping[str, Any]) -> StoredRun:
    return StoredRun(**row)


class RunStore:
    """A run store. Pass it as the agent option ``store`` or per run (``store=``); list
    the approval inbox with ``list(status="waiting_for_human")``."""

    def __init__(self, native: _native.NativeRunStore) -> None:
        self._native = native

    def list(self, *, status: Statuses = None, agent_id: Optional[str] = None, limit: Optional[int] = None,
             cursor: Optional[str] = None) -> RunPage:
        """One page of runs (oldest update first) of the given status(es) and agent; every
        run when no filter is given. ``limit`` defaults to 100."""
        rows, next_cursor = self._native.list(_statuses(status), agent_id, limit, cursor)
        return RunPage([_run(r) for r in rows], next_cursor)

    def load(self, run_id: str) -> Optional[StoredRun]:
        """The stored run ``run_id``, or None."""
        row = self._native.load(run_id)
        return None if row is None else _run(row)

    def delete(self, run_id: str) -> bool:
        """Deletes a run; whether it was stored."""
        return self._native.delete(run_id)

    def prune(self, statuses: Statuses, *, older_than: Union[datetime, timedelta, float, int]) -> int:
        """Deletes the runs of ``statuses`` last updated before ``older_than`` (a datetime,
        or an age: a timedelta or seconds); returns how many."""
        return self._native.prune(_statuses(statuses) or [], _cutoff_ms(older_than))

    async def list_async(self, *, status: Statuses = None, agent_id: Optional[str] = None,
                         limit: Optional[int] = None, cursor: Optional[str] = None) -> RunPage:
        """Like :meth:`list`, on a worker thread."""
        return await asyncio.to_thread(lambda: self.list(status=status, agent_id=agent_id, limit=limit, cursor=cursor))

    async def load_async(self, run_id: str) -> Optional[StoredRun]:
        """Like :meth:`load`, on a worker thread."""
        return await asyncio.to_thread(self.load, run_id)

    async def delete_async(self, run_id: str) -> bool:
        """Like :meth:`delete`, on a worker thread."""
        return await asyncio.to_thread(self.delete, run_id)

    async def prune_async(self, statuses: Statuses, *, older_than: Union[datetime, timedelta, float, int]) -> int:
        """Like :meth:`prune`, on a worker thread."""
        return await asyncio.to_thread(lambda: self.prune(statuses, older_than=older_than))

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class InMemoryRunStore(RunStore):
    """Runs kept in this process's memory (tests: nothing survives the process)."""

    def __init__(self) -> None:
        super().__init__(_native.NativeRunStore.memory())


class SqliteRunStore(RunStore):
    """Runs kept in the SQLite file at ``path`` (created and migrated when needed): nothing
    to install; several processes on one host share it."""

    def __init__(self, path: Union[str, PathLike[str]]) -> None:
        super().__init__(_native.NativeRunStore.sqlite(str(path)))
        self.path = str(path)

    def __repr__(self) -> str:
        return f"SqliteRunStore({self.path!r})"


class PostgresRunStore(RunStore):
    """Runs kept in PostgreSQL at ``url`` (``postgres://user:pass@host:port/db``): many
    workers on many machines. The constructor connects and migrates the schema now (a
    failure raises :class:`~phaseo_agent.errors.AgentStoreError`); in asyncio code use
    ``await PostgresRunStore.connect_async(url)``."""

    def __init__(self, url: str) -> None:
        super().__init__(_native.NativeRunStore.postgres(url))

    @classmethod
    async def connect_async(cls, url: str) -> "PostgresRunStore":
        """Connects on a worker thread."""
        return await asyncio.to_thread(cls, url)

    def __repr__(self) -> str:
        return "PostgresRunStore(...)"


def is_accessor(value: Any) -> bool:
    """Whether ``value`` is the application's state accessor (the product's ``state``
    option): an object with callable ``load`` and ``save``, not a state itself."""
    if value is None or isinstance(value, (RunResult, str, bytes, bytearray, Mapping, RunStore)):
        return False
    return callable(getattr(value, "load", None)) and callable(getattr(value, "save", None))


def accessor_store(accessor: Any) -> _native.NativeRunStore:
    """A store over the application's ``load(run_id)``/``save(state)`` (each may be a
    coroutine function): ``load`` returns a RunResult, its JSON or dict, or None; ``save``
    receives a RunResult. Saves and loads only: no at-most-once claim, no listing."""

    async def load(run_id: str) -> Optional[str]:
        value = accessor.load(run_id)
        if inspect.isawaitable(value):
            value = await value
        if value is None:
            return None
        if isinstance(value, RunResult):
            return value.to_json()
        if isinstance(value, (str, bytes, bytearray)):
            return RunResult.from_json(bytes(value) if isinstance(value, bytearray) else value).to_json()
        return RunResult.from_dict(value).to_json()

    async def save(run_id: str, state_json: str) -> None:
        value = accessor.save(RunResult.from_json(state_json))
        if inspect.isawaitable(value):
            await value

    return _native.NativeRunStore.accessor(load, save)


def native_store(store: Any, what: str = "store") -> Optional[_native.NativeRunStore]:
    """The native store of a ``store=`` option: a :class:`RunStore`, or an accessor."""
    if store is None:
        return None
    if isinstance(store, RunStore):
        return store._native
    if is_accessor(store):
        return accessor_store(store)
    raise TypeError(f"{what} must be a RunStore (SqliteRunStore, PostgresRunStore, InMemoryRunStore) "
                    f"or an object with load(run_id) and save(state), got {type(store).__name__}")

