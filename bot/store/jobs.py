"""Processes that share out the chunks of an export or a replay (`tandem export --jobs`,
`tandem replay --jobs`; bot.store.replay describes its part).

What: `Workers` forks `jobs` - 1 worker processes; every process, the caller's too, takes the
next chunk none has taken (`Workers.claimed`, one shared counter) until none is left. An
export's chunks are participants in order of enrollment, cut by their events, largest first
(`chunk_shares`, placed by `cut`); each chunk's rows go to `.<name>.<fmt>.part-K` files and its
events lines to sorted runs (bot.reporting.merge), which the caller joins in order at the end:
the files one process writes, byte for byte. The caller reads what workers send between its
own chunks (`Workers.poll`), so none waits on a full pipe.

Why so: taking chunks in turn, largest first, makes the processes end within one small chunk
of each other however fast each runs. All read one snapshot: PostgreSQL's is exported and
imported (`pg_export_snapshot`, `SET TRANSACTION SNAPSHOT`, as `pg_dump --jobs`); SQLite cannot
share one, so the caller holds the writer lock (`hold_writes`) until every worker has made its
first read. Each worker checks that its snapshot's last event is the caller's. Forked, not
spawned, because importing Tandem afresh costs as much as a whole export; forked before any
transaction opens, and only where no other thread runs (the progress bars start after the
fork; a web process never forks), except SQLite's checkpoint thread, which is held still
(`Checkpointer.held`) so no worker inherits SQLite's mutex mid-checkpoint. Workers open
connections of their own (`Engine.dispose(close=False)`) and never touch inherited ones. A
worker's exception is raised by the caller with its traceback; leaving ends every worker.
Figures: docs/performance.md (Export, Replay).
"""

from __future__ import annotations

import multiprocessing
import pickle
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from multiprocessing.connection import Connection as Pipe
from multiprocessing.connection import wait
from types import TracebackType
from typing import Any

from sqlalchemy import Connection, func, select

from bot.store.database import CHECKPOINTS
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
# How many equal chunks each process's share of a replay is cut into (`equal_shares`).
EQUAL_CHUNKS = 4


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
    """How many participants there are: what `process_count` shares out."""
    return int(conn.execute(select(func.count()).select_from(participants)).scalar_one())


def process_count(jobs: int, participants: int, per_part: int, what: str) -> int:
    """How many processes `what` ("export", "replay") of `participants` runs in with `jobs`:
    the caller's own and the workers it forks (`Workers`: one fewer). 0 (one process, no
    workers) unless `jobs` allows 2 or more processes of `per_part` participants each. Raises
    CannotFork where the platform cannot fork."""
    if jobs < 2:
        return 0
    if not can_fork():
        raise CannotFork(
            f"{jobs} jobs need worker processes forked from this one, and this platform "
            f"cannot fork: {what} with one (jobs 1)"
        )
    processes = min(jobs, participants // per_part)
    return processes if processes >= 2 else 0


def chunk_shares(processes: int, participants: int, per_part: int) -> list[float]:
    """The shares of the work (fractions of the events, in order) of the chunks `processes`
    (2 or more: `process_count`) share out among themselves, largest first: each a
    2 x `processes`-th of what is left, but at least half of `per_part` participants' worth,
    the last taking what is left. The processes end within a small chunk of each other
    however each one's other work delays it (equal chunks left them up to one large chunk
    apart), and a small chunk costs a few queries of its own, so not many of them."""
    least = max(per_part // 2, 1) / participants
    shares: list[float] = []
    left = 1.0
    while left > 1e-9:
        share = min(max(left / (2 * processes), least), left)
        if left - share < least:  # no sliver of a chunk at the end
            share = left
        shares.append(share)
        left -= share
    return shares


def equal_shares(processes: int, participants: int, per_part: int) -> list[float]:
    """Equal shares of the work for `processes` (2 or more: `process_count`) to share out:
    EQUAL_CHUNKS for each process, each of at least half of `per_part` participants, and never
    fewer than the processes. For a replay, where each chunk costs a scan of the events on
    PostgreSQL (`chunk_shares`' smaller chunks made a replay in parts slower there, and no
    faster on SQLite)."""
    least = max(per_part // 2, 1)
    count = max(processes, min(processes * EQUAL_CHUNKS, participants // least))
    return [1 / count] * count


def cut(weights: Sequence[int], shares: Sequence[float]) -> list[int]:
    """Where rows of `weights` (each row's events, in order) are cut into consecutive
    chunks of about `shares` of them each: the index of the last row of each chunk but the
    last. A chunk ends at the row that brings it to its share of the rows not yet in a
    chunk (its share of the shares left), so a heavy row makes its chunk larger and the
    rest share what is left; never an empty chunk, up to len(shares) of them."""
    total = sum(weights)
    cuts: list[int] = []
    if len(shares) < 2:
        return cuts
    left = sum(shares)
    seen = 0
    end = total * shares[0] / left
    for index, weight in enumerate(weights[:-1]):  # the last row ends the last chunk
        seen += weight
        if seen >= end:
            cuts.append(index)
            if len(cuts) == len(shares) - 1:
                break
            left -= shares[len(cuts) - 1]
            end = seen + (total - seen) * shares[len(cuts)] / left
    return cuts


class WorkerFailed(RuntimeError):
    """A worker process ended without a result (killed, or it could not send its error)."""


class Workers:
    """`count` worker processes, forked on entering, that share out chunks of work with the
    caller's process in the snapshot of the caller's transaction (`begin`): each process,
    the caller's too (`claimed`), takes the next chunk no one has taken, runs it (`run`, in a
    worker), and takes another, until none is left, so that the processes end together
    whatever each one's other work and however fast each runs. Leaving ends any worker still
    running, then, if it is left by an exception, calls `failed` (to remove what they wrote).
    """

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
        self.chunks: list[Any] = []
        self._next: Any = None  # the next chunk to take, shared with the workers
        self._waiting: dict[int, Pipe] = {}  # the workers whose results are still to come

    def __enter__(self) -> Workers:
        context = multiprocessing.get_context("fork")
        if self.count:  # made before the fork, so that every process shares it
            self._next = context.Value("q", 0)
        with CHECKPOINTS.held():  # no SQLite call of the checkpoint thread's is cut by a fork
            for _ in range(self.count):
                ours, theirs = context.Pipe()
                process = context.Process(
                    target=_serve,
                    args=(self.store, self.run, theirs, self.label, self._next),
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

    def begin(self, conn: Connection, upto: int, chunks: list[Any]) -> None:
        """Give every worker the `chunks` to share out, in the snapshot of `conn`'s
        transaction, whose last event is `upto`; return once each has begun its own
        transaction in that snapshot. The caller takes its own share with `claimed`."""
        if not chunks:
            raise ValueError("no chunks to share out")
        self.chunks = list(chunks)
        snapshot = exported_snapshot(conn) if conn.dialect.name == "postgresql" else None
        for pipe in self.pipes:
            pipe.send(("task", self.chunks, snapshot, upto))
        self.started = len(self.pipes)
        self._waiting = dict(enumerate(self.pipes))
        for index in range(self.started):
            message = self._receive(index)
            if message[0] != "ready":
                raise WorkerFailed(
                    f"{self.label} worker {index} sent {message[0]!r} before beginning"
                )

    def claimed(self) -> Iterator[tuple[int, Any]]:
        """(index, chunk) of each chunk the caller's process takes, as it takes them: the
        next one no process has taken, each time it asks, until none is left."""
        return _claimed(self._next, self.chunks)

    def poll(self, report: Report, take: Callable[[int, Any], None]) -> None:
        """What the workers have sent, handled now, without waiting (`results`): for the
        caller to run between its own chunks' rows, so that no worker waits to send."""
        self._handle(report, take, timeout=0)

    def results(self, report: Report, take: Callable[[int, Any], None]) -> None:
        """Wait for every started worker's results, handing each chunk's (index, result) to
        `take` and each of their reports of progress to `report`, as they come."""
        while self._waiting:
            self._handle(report, take, timeout=None)

    def _handle(
        self, report: Report, take: Callable[[int, Any], None], timeout: float | None
    ) -> None:
        for pipe in wait(list(self._waiting.values()), timeout):
            index = next(i for i, p in self._waiting.items() if p is pipe)
            while index in self._waiting and self._waiting[index].poll():
                message = self._receive(index)
                if message[0] == "step":
                    report(message[1])
                elif message[0] == "done":
                    for chunk, result in message[1]:
                        take(chunk, result)
                    del self._waiting[index]
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


def _claimed(shared: Any, chunks: list[Any]) -> Iterator[tuple[int, Any]]:
    """(index, chunk) of the chunks this process takes from `shared` (the next index not yet
    taken by any process), one at a time, until none is left."""
    while True:
        with shared.get_lock():
            index = shared.value
            if index >= len(chunks):
                return
            shared.value = index + 1
        yield index, chunks[index]


def _serve(store: EventStore, run: Run, pipe: Pipe, label: str, shared: Any) -> None:
    """A worker process: wait for the chunks; run each it takes (`_claimed`) in the caller's
    snapshot; send their results."""
    try:
        message = pipe.recv()
        if message[0] != "task":
            return
        _kind, chunks, snapshot, upto = message
        _inherited.append(store.engine.pool)
        store.engine.dispose(close=False)  # connections of its own, from here on
        with _snapshot(store, snapshot) as conn:
            seen = last_seq(conn)
            if seen != upto:
                raise RuntimeError(
                    f"{label} worker's snapshot ends at event {seen}, the {label}'s at {upto}"
                )
            pipe.send(("ready",))

            def step(steps: dict[str, int]) -> None:
                pipe.send(("step", steps))

            done = [
                (index, run(store, conn, chunk, step)) for index, chunk in _claimed(shared, chunks)
            ]
        pipe.send(("done", done))
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
