"""Worker processes that each do a part of an export or a replay at once (`tandem export
--jobs`, `tandem replay --jobs`: bot.store.replay does its part of the work as described there).

An export spends most of its time on Python work on one core: the per-participant files
(messages, results, retrievals, forms) and the events file's lines, made as those files read
each event. With `jobs` of 2 or more, `bot.store.export.export` splits the participants, in
order of enrollment, into parts of about as many events each, and a worker process writes each
part: its rows of each file (`.<name>.<fmt>.part-N`) and its events lines, as sorted runs
(bot.store.export_runs). The export's own process writes participants.csv, and reads the
events of no participant, meanwhile, then joins the parts, in order, into each file and merges
the runs into the events file. The files are the ones one process writes, byte for byte.

All in one snapshot: every worker reads the database as the export's own transaction sees it.
- PostgreSQL: the export's REPEATABLE READ transaction exports its snapshot and each worker's
  transaction takes it (bot.store.prefetch: `pg_export_snapshot`, `SET TRANSACTION
  SNAPSHOT`), as `pg_dump --jobs` does.
- SQLite cannot share a snapshot between connections; a transaction's snapshot (WAL) is taken
  at its first read. So the export holds the writer lock (BEGIN IMMEDIATE: `hold_writes`) from
  before its own first read until every worker has made its first: nothing commits between
  them, so all of them see the same database. Writers wait meanwhile, for milliseconds: the
  workers are already running and only begin their transactions.
Each worker checks that the last event its snapshot holds is the export's last, and fails
otherwise.

Forked, not spawned: a new interpreter took 0.9-1.3 s to import Tandem on this machine, as long
as an export of 4,000 participants takes. The workers are forked when the export starts,
before it opens any transaction, so no lock or transaction is carried into them. They open
connections of their own (SQLAlchemy's `Engine.dispose(close=False)`) and never use or close
the ones they inherit: SQLite's rule for fork() is that a connection is used in the process
that opened it. A forked worker has only the thread that forked it, so a lock another thread
held at that moment stays held in the worker: the export forks from `tandem export` and the
replay from `tandem replay`, whose processes run no other thread of their own then (their
progress bars, whose monitor thread tqdm starts, are made after the fork); a web process (the
console's downloads) does not fork (Python 3.12 and later warn of fork() in a process with
threads). One thread may run in any process that has committed often enough: SQLite's
checkpoint thread (bot.store.engine.Checkpointer). The workers are forked while it is held
(`Checkpointer.held`), so that none inherits SQLite's own mutex held mid-checkpoint (a test
run's export hung so, its workers waiting for ever in sqlite3.connect). A worker that fails
sends its exception and traceback, and the export raises it;
leaving the export ends any worker still running.
"""

from __future__ import annotations

import multiprocessing
import pickle
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection as Pipe
from multiprocessing.connection import wait
from types import TracebackType
from typing import Any

from sqlalchemy import Connection, func, select

from bot.store.engine import CHECKPOINTS
from bot.store.event_store import EventStore
from bot.store.prefetch import exported_snapshot, joined
from bot.store.schema import events, participants

# What a worker runs: (the store, its connection in the export's snapshot, its task, a function
# that reports progress: {file name: rows written since the last report}) -> its result.
Report = Callable[[dict[str, int]], None]
Run = Callable[[EventStore, Connection, Any, Report], Any]

# The pools a worker inherited and replaced: kept referenced, so that no connection of the
# parent's is closed (collected) in the worker.
_inherited: list[Any] = []


class CannotFork(ValueError):
    """Worker processes asked for on a platform that cannot fork (Windows)."""


def can_fork() -> bool:
    """Whether this platform forks processes (not Windows)."""
    return "fork" in multiprocessing.get_all_start_methods()


def last_seq(conn: Connection) -> int:
    """The last event `conn`'s snapshot holds (0: none): what a task in parts is checked
    against in each worker."""
    return int(conn.execute(select(func.coalesce(func.max(events.c.seq), 0))).scalar_one())


def count_participants(conn: Connection) -> int:
    """How many participants there are: what `worker_count` splits."""
    return int(conn.execute(select(func.count()).select_from(participants)).scalar_one())


def worker_count(jobs: int, participants: int, per_part: int, what: str) -> int:
    """How many worker processes `what` ("export", "replay") of `participants` takes with
    `jobs`: none (it runs in one process) unless `jobs` allows 2 or more parts of `per_part`
    participants each. Raises CannotFork where the platform cannot fork."""
    if jobs < 2:
        return 0
    if not can_fork():
        raise CannotFork(
            f"{jobs} jobs need worker processes forked from this one, and this platform "
            f"cannot fork: {what} with one (jobs 1)"
        )
    workers = min(jobs, participants // per_part)
    return workers if workers >= 2 else 0


class WorkerFailed(RuntimeError):
    """A worker process ended without a result (killed, or it could not send its error)."""


class Workers:
    """`count` worker processes, forked on entering, each to run `run` on one task in the
    snapshot of the caller's transaction (`begin`); leaving ends any still running, then, if
    it is left by an exception, calls `failed` (to remove what they wrote)."""

    def __init__(
        self,
        store: EventStore,
        count: int,
        run: Run,
        failed: Callable[[], None] | None = None,
        *,
        label: str = "export",
    ) -> None:
        self.store = store
        self.label = label  # what the workers do, in their process names and errors
        self.count = count
        self.run = run
        self.failed = failed
        self.processes: list[Any] = []
        self.pipes: list[Pipe] = []
        self.started = 0

    def __enter__(self) -> Workers:
        context = multiprocessing.get_context("fork")
        with CHECKPOINTS.held():  # no SQLite call of the checkpoint thread's is cut by a fork
            for _ in range(self.count):
                ours, theirs = context.Pipe()
                process = context.Process(
                    target=_serve,
                    args=(self.store, self.run, theirs, self.label),
                    name=f"{self.label}-worker",
                )
                process.start()
                theirs.close()
                self.processes.append(process)
                self.pipes.append(ours)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop(wait=10 if kind is None else 0)
        for pipe in self.pipes:
            pipe.close()
        if kind is not None and self.count and self.failed is not None:
            self.failed()

    def stop(self, wait: float = 0) -> None:
        """End every worker: one given no task is told to quit; one still running after
        `wait` seconds is terminated. Returns once all have ended."""
        for pipe in self.pipes:
            try:
                pipe.send(("quit",))
            except OSError:
                pass  # it has ended, or closed its end
        for process in self.processes:
            process.join(timeout=wait)
            if process.is_alive():
                process.terminate()
                process.join()

    @contextmanager
    def hold_writes(self) -> Iterator[None]:
        """On SQLite, with workers, the writer lock (BEGIN IMMEDIATE) held until left: enter
        it before the export's first read and leave it once `begin` returns. Elsewhere
        nothing."""
        if not self.count or self.store.engine.dialect.name != "sqlite":
            yield
            return
        with self.store.engine.connect() as conn, conn.begin() as held:
            yield
            held.rollback()  # nothing was written

    def begin(self, conn: Connection, upto: int, tasks: list[Any]) -> None:
        """Give the first len(tasks) workers a task each (the rest, none) in the snapshot of
        `conn`'s transaction, whose last event is `upto`; return once each has begun its own
        transaction in that snapshot."""
        if len(tasks) > self.count:
            raise ValueError(f"{len(tasks)} tasks for {self.count} workers")
        snapshot = exported_snapshot(conn) if conn.dialect.name == "postgresql" else None
        for pipe, task in zip(self.pipes, tasks, strict=False):
            pipe.send(("task", task, snapshot, upto))
        self.started = len(tasks)
        for index in range(self.started):
            message = self._receive(index)
            if message[0] != "ready":
                raise WorkerFailed(
                    f"{self.label} worker {index} sent {message[0]!r} before beginning"
                )

    def results(self, report: Report, take: Callable[[Any], None]) -> None:
        """Wait for every started worker's result, handing each to `take` and each of their
        reports of progress to `report`, as they come."""
        waiting = dict(enumerate(self.pipes[: self.started]))
        while waiting:
            for pipe in wait(list(waiting.values())):
                index = next(i for i, p in waiting.items() if p is pipe)
                message = self._receive(index)
                if message[0] == "step":
                    report(message[1])
                elif message[0] == "done":
                    take(message[1])
                    del waiting[index]
                else:
                    raise WorkerFailed(f"{self.label} worker {index} sent {message[0]!r}")

    def _receive(self, index: int) -> tuple[Any, ...]:
        """Worker `index`'s next message; its exception raised here if it failed."""
        pipe, process = self.pipes[index], self.processes[index]
        try:
            message = pipe.recv()
        except EOFError:
            process.join()
            raise WorkerFailed(
                f"{self.label} worker {index} ended (exit code {process.exitcode}) without a result"
            ) from None
        if message[0] == "failed":
            _kind, pickled, text = message
            if pickled is None:
                raise WorkerFailed(f"{self.label} worker {index} failed:\n{text}")
            error = pickle.loads(pickled)  # noqa: S301 - from the worker this process forked
            error.add_note(f"in {self.label} worker {index}:\n{text}")
            raise error
        return tuple(message)


def _serve(store: EventStore, run: Run, pipe: Pipe, label: str) -> None:
    """A worker process: wait for a task; run it in the caller's snapshot; send its result."""
    try:
        message = pipe.recv()
        if message[0] != "task":
            return
        _kind, task, snapshot, upto = message
        _inherited.append(store.engine.pool)
        store.engine.dispose(close=False)  # connections of its own, from here on
        with _snapshot(store, snapshot) as conn:
            seen = last_seq(conn)
            if seen != upto:
                raise RuntimeError(
                    f"{label} worker's snapshot ends at event {seen}, the {label}'s at {upto}"
                )
            pipe.send(("ready",))
            result = run(store, conn, task, lambda steps: pipe.send(("step", steps)))
        pipe.send(("done", result))
    except BaseException as exc:  # noqa: BLE001 - sent to the export, which raises it
        try:
            pipe.send(("failed", _pickled(exc), traceback.format_exc()))
        except OSError:
            pass  # the export is gone
    finally:
        pipe.close()


def _pickled(exc: BaseException) -> bytes | None:
    """`exc` pickled, if it pickles and unpickles (the export raises it); else None."""
    try:
        data = pickle.dumps(exc)
        pickle.loads(data)  # noqa: S301 - our own bytes, back in our own process
    except Exception:  # noqa: BLE001 - then the export raises WorkerFailed with its text
        return None
    return data


@contextmanager
def _snapshot(store: EventStore, snapshot: str | None) -> Iterator[Connection]:
    if snapshot is None:  # SQLite: the export holds the writer lock until this one has read
        with store.snapshot() as conn:
            yield conn
        return
    with joined(store.engine, snapshot) as conn:
        yield conn
