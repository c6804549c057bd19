"""An export in parts, by worker processes (bot.store.jobs): the same files as one
process writes, in one snapshot, and a worker's failure is the export's."""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from bot.core.clock import FakeClock
from bot.reporting import export as export_module
from bot.reporting.export import export
from bot.store.event_store import EventStore
from bot.store.event_types import MessageReceived
from bot.store.events import NewEvent, participant_stream
from bot.store.jobs import CannotFork, WorkerFailed, Workers
from bot.store.schema import participants
from tests.cli.test_export import tandem
from tests.factories import enrolled
from tests.reporting.test_export_runs import START, _events_of_many_streams
from tests.reporting.test_export_whole import _study

FILES = ["allocations", "broadcasts", "decisions", "evaluations", "events", "forms"]
FILES += ["instruments"]
FILES += ["messages", "participants", "results", "retrievals"]


@pytest.fixture
def parts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Parts of one participant allowed; the processes each export's chunks were shared
    among (its own and its workers), as the workers begin."""
    return counted_parts(monkeypatch, export_module)


def counted_parts(monkeypatch: pytest.MonkeyPatch, module: Any) -> list[int]:
    """Parts of one participant allowed in `module` (its PART_PARTICIPANTS); the processes
    each of its runs' chunks were shared among (its own and its workers), as the workers
    begin. Every run has at least as many chunks as processes."""
    monkeypatch.setattr(module, "PART_PARTICIPANTS", 1)
    begun: list[int] = []
    begin = Workers.begin

    def counted(self: Workers, conn: Any, upto: int, chunks: list[Any]) -> None:
        assert len(chunks) >= self.count + 1
        begun.append(self.count + 1)
        begin(self, conn, upto, chunks)

    monkeypatch.setattr(Workers, "begin", counted)
    return begun


def _study_of_five(store: EventStore, clock: FakeClock) -> list[str]:
    """The whole-export study (messages, results, retrievals, forms; two participants) and
    three more participants whose messages interleave, with system and orphan streams."""
    _study(store, clock)
    return _events_of_many_streams(store, clock)


def _files(out: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(out.iterdir())}


def _without_last_line(text: bytes) -> bytes:
    body = text.rstrip(b"\r\n")
    return body[: body.rfind(b"\n") + 1]


@pytest.mark.parametrize(("fmt", "pseudonymise"), [("csv", False), ("jsonl", False), ("csv", True)])
def test_an_export_in_parts_writes_the_files_one_process_writes_byte_for_byte(
    store: EventStore,
    clock: FakeClock,
    tmp_path: Path,
    parts: list[int],
    fmt: Any,
    pseudonymise: bool,
) -> None:
    _study_of_five(store, clock)
    one = export(store, tmp_path / "one", fmt, pseudonymise=pseudonymise)
    assert parts == []  # one process: no workers
    three = export(store, tmp_path / "three", fmt, pseudonymise=pseudonymise, jobs=3)
    assert parts == [3] and (one.workers, three.workers) == (0, 2)

    alone, parted = _files(tmp_path / "one"), _files(tmp_path / "three")
    assert sorted(parted) == sorted(alone)  # and no part or run file left behind
    names = [f"{name}.{fmt}" for name in FILES if not (pseudonymise and name == "events")]
    assert sorted(parted) == sorted(names)
    for name in names:
        if name.startswith("events."):
            # the same, and after it the first export's own record (export.written)
            assert _without_last_line(parted[name]) == alone[name]
            assert b"export.written" in parted[name].rstrip().rsplit(b"\n", 1)[-1]
        else:
            assert parted[name] == alone[name], name
    assert three.messages == one.messages > 0
    assert (three.results, three.retrievals, three.forms) == (
        one.results,
        one.retrievals,
        one.forms,
    )
    assert three.events == one.events + (0 if pseudonymise else 1)


def test_the_parts_split_the_participants_in_order_by_their_events(
    store: EventStore, clock: FakeClock
) -> None:
    """Each participant in exactly one span, spans in order of enrollment, each of about its
    share of the events not yet in a span: the second participant, with 31 events of 52,
    closes the first span, and the other four share the rest."""
    people = [enrolled(phone=f"+1416555{n:04d}") for n in range(6)]
    for n, person in enumerate(people):
        clock.set(START + timedelta(minutes=n))
        talk = [NewEvent(_message(person.phone, k)) for k in range(30 if n == 1 else 2)]
        store.append(participant_stream(person.participant_id), [NewEvent(person), *talk])
    with store.snapshot() as conn:
        spans = export_module._spans(conn, [1 / 3] * 3)
        clauses = [export_module.in_span(span) for span in spans]
        members = [[row.participant_id for row in _placed(conn, where)] for where in clauses]
        everyone = [row.participant_id for row in _placed(conn)]
        assert export_module._spans(conn, [1.0]) == [(None, spans[-1][1])]
    ids = [person.participant_id for person in people]
    assert everyone == ids
    assert members == [ids[:2], ids[2:4], ids[4:]]


def _placed(conn: Any, where: list[Any] | None = None) -> list[Any]:
    table = participants
    query = select(table.c.enrolled_at, table.c.participant_id).where(*(where or []))
    return list(conn.execute(query.order_by(table.c.enrolled_at, table.c.participant_id)))


def _message(phone: str, n: int) -> MessageReceived:
    return MessageReceived(
        message_sid=f"SM{phone[1:]}{n:020d}"[:34],
        from_address=phone,
        to_address="+15005550006",
        channel="sms",
        body=f"message {n}",
    )


def test_a_message_recorded_while_the_workers_read_is_in_no_file(
    store: EventStore, clock: FakeClock, tmp_path: Path, parts: list[int]
) -> None:
    ids = _study_of_five(store, clock)
    appended: list[int] = []

    def progress(name: str, _total: int | None) -> Any:
        def step(_rows: int) -> None:
            # while participants.csv is written, the workers are at work in the snapshot
            if name == "participants" and not appended:
                clock.set(START + timedelta(days=2))
                message = _message("+14165550000", 99)  # the first of the three's phone
                stream = participant_stream(ids[0])
                appended.append(store.append(stream, [NewEvent(message)]).events[0].seq)

        return step

    export(store, tmp_path / "out", "csv", progress=progress, jobs=3)
    assert parts == [3] and appended
    for name in ("messages.csv", "events.csv"):
        text = (tmp_path / "out" / name).read_text(encoding="utf-8")
        assert "message 99" not in text, name
        assert "walked, day 0" in text  # what was there before is


def test_no_write_commits_between_the_exports_first_read_and_the_workers(
    store: EventStore, clock: FakeClock, tmp_path: Path, parts: list[int], monkeypatch: Any
) -> None:
    """A write begun just before the workers take the snapshot: on SQLite it waits for the
    export's hold on the writer lock, on PostgreSQL the workers take the export's snapshot;
    either way the export's files and its workers agree (a worker whose snapshot differed
    would fail the export), and the write is in none of them."""
    ids = _study_of_five(store, clock)
    begin = Workers.begin
    writer: list[threading.Thread] = []

    def racing(self: Workers, conn: Any, upto: int, tasks: list[Any]) -> None:
        message = _message("+14165550000", 98)
        write = threading.Thread(
            target=store.append, args=(participant_stream(ids[0]), [NewEvent(message)])
        )
        write.start()
        writer.append(write)
        time.sleep(0.3)  # time for the write to commit, were nothing holding it
        begin(self, conn, upto, tasks)

    monkeypatch.setattr(Workers, "begin", racing)
    export(store, tmp_path / "out", "csv", jobs=2)
    writer[0].join(timeout=30)
    assert not writer[0].is_alive()  # it went through once the workers had begun
    events = (tmp_path / "out" / "events.csv").read_text(encoding="utf-8")
    assert "message 98" not in events
    assert "message 98" in "".join(str(e.data) for e in store.read_all())


def test_a_worker_that_fails_fails_the_export_and_leaves_no_file(
    store: EventStore, clock: FakeClock, tmp_path: Path, parts: list[int], monkeypatch: Any
) -> None:
    _study_of_five(store, clock)
    write_part = export_module._write_part

    def failing(store: EventStore, conn: Any, part: Any, report: Any) -> Any:
        if part.index == 1:
            raise ValueError("a worker's own failure")
        return write_part(store, conn, part, report)

    monkeypatch.setattr(export_module, "_write_part", failing)  # the workers fork with it
    monkeypatch.setattr(Workers, "claimed", none_claimed)  # the workers take every chunk
    before = len(list(store.read_all()))
    with pytest.raises(ValueError, match="a worker's own failure") as failed:
        export(store, tmp_path / "out", "csv", jobs=3)
    assert any("in export worker" in note for note in failed.value.__notes__)
    # participants.csv and allocations.csv, written whole before the failure came, as one
    # process leaves them; no part, run or partial file, and none of the files the workers write
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == [
        "allocations.csv",
        "broadcasts.csv",
        "participants.csv",
    ]
    assert len(list(store.read_all())) == before  # no export.written


def none_claimed(_workers: Workers) -> Any:
    """`Workers.claimed` of a caller's process that takes no chunk: the workers take all."""
    return iter(())


def test_the_exports_own_process_takes_chunks_the_workers_have_not_taken(
    store: EventStore, clock: FakeClock, tmp_path: Path, parts: list[int], monkeypatch: Any
) -> None:
    """Each chunk is written once, by whichever process takes it first: a worker slow to
    write leaves the rest to the export's own process, and the files are the same."""
    _study_of_five(store, clock)
    alone = export(store, tmp_path / "one", "csv")
    write_span = export_module._write_span
    taken = tmp_path / "taken"

    def recorded(conn: Any, sealer: Any, part: Any, report: Any, runs: Any) -> None:
        if os.getpid() != exporter:
            time.sleep(0.5)  # a slow worker
        with taken.open("a") as out:
            out.write(f"{part.index} {os.getpid()}\n")
        write_span(conn, sealer, part, report, runs)

    exporter = os.getpid()
    monkeypatch.setattr(export_module, "_write_span", recorded)
    two = export(store, tmp_path / "two", "csv", jobs=2)
    assert parts == [2] and two.workers == 1
    chunks = [line.split() for line in taken.read_text().splitlines()]
    assert sorted(int(index) for index, _pid in chunks) == list(range(len(chunks)))
    assert len(chunks) >= 2  # more chunks than processes, each written once
    assert {int(pid) for _index, pid in chunks} >= {exporter}
    assert (two.messages, two.events) == (alone.messages, alone.events + 1)
    for name in ("messages.csv", "results.csv", "retrievals.csv", "forms.csv", "instruments.csv"):
        assert (tmp_path / "two" / name).read_bytes() == (tmp_path / "one" / name).read_bytes()


def test_a_failure_of_the_export_while_its_workers_write_ends_them_and_leaves_no_part(
    store: EventStore, clock: FakeClock, tmp_path: Path, parts: list[int]
) -> None:
    _study_of_five(store, clock)

    def progress(name: str, _total: int | None) -> Any:
        def step(_rows: int) -> None:
            if name == "participants":  # the workers are at work meanwhile
                raise OSError("the disk is full")

        return step

    with pytest.raises(OSError, match="the disk is full"):
        export(store, tmp_path / "out", "csv", progress=progress, jobs=3)
    assert parts == [3]
    alive = [child for child in multiprocessing.active_children() if child.name == "export-worker"]
    assert alive == []  # every worker ended
    assert list((tmp_path / "out").iterdir()) == []  # no part, partial or run file


def test_a_worker_killed_fails_the_export_with_its_exit_code(
    store: EventStore, clock: FakeClock, tmp_path: Path, parts: list[int], monkeypatch: Any
) -> None:
    _study_of_five(store, clock)

    def killed(_store: EventStore, _conn: Any, _part: Any, _report: Any) -> Any:
        os._exit(3)  # as a worker killed outright: no message, only an exit code

    monkeypatch.setattr(export_module, "_write_part", killed)
    monkeypatch.setattr(Workers, "claimed", none_claimed)  # the worker takes every chunk
    with pytest.raises(WorkerFailed, match=r"exit code 3"):
        export(store, tmp_path / "out", "csv", jobs=2)
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == [
        "allocations.csv",
        "broadcasts.csv",
        "participants.csv",
    ]


def test_an_export_of_few_participants_or_named_ones_runs_in_one_process(
    store: EventStore, clock: FakeClock, tmp_path: Path, monkeypatch: Any
) -> None:
    begun: list[int] = []
    monkeypatch.setattr(Workers, "begin", lambda *args: begun.append(1))
    ids = _study_of_five(store, clock)  # five participants: fewer than two parts' worth
    export(store, tmp_path / "few", "csv", jobs=4)
    monkeypatch.setattr(export_module, "PART_PARTICIPANTS", 1)
    export(store, tmp_path / "named", "csv", participant_ids=ids, jobs=4)
    assert begun == []
    assert (tmp_path / "few" / "messages.csv").exists()
    with pytest.raises(ValueError, match="jobs must be 1 or more"):
        export(store, tmp_path / "none", "csv", jobs=0)


def test_jobs_on_a_platform_that_cannot_fork_are_refused(
    store: EventStore, clock: FakeClock, tmp_path: Path, monkeypatch: Any
) -> None:
    _study_of_five(store, clock)
    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    with pytest.raises(CannotFork, match="cannot fork: export with one"):
        export(store, tmp_path / "out", "csv", jobs=2)
    assert not (tmp_path / "out").exists()
    export(store, tmp_path / "out", "csv")  # one process needs no fork


def test_tandem_export_jobs_writes_in_parts_the_same_files(
    store: EventStore, database_url: str, tmp_path: Path
) -> None:
    """The command, in a process of its own, with enough participants for two parts."""
    with store.transaction() as tx:
        for n in range(2 * export_module.PART_PARTICIPANTS + 1):
            person = enrolled(phone=f"+1416{n:07d}")
            talk = [NewEvent(_message(person.phone, k)) for k in range(n % 3)]
            tx.append(participant_stream(person.participant_id), [NewEvent(person), *talk])
    one = tandem("export", "--out", str(tmp_path / "one"), "--no-progress", url=database_url)
    two = tandem(
        "export", "--out", str(tmp_path / "two"), "--jobs", "2", "--no-progress", url=database_url
    )
    assert one.returncode == 0, one.stderr
    assert two.returncode == 0, two.stderr
    assert "worker" not in one.stdout
    assert two.stdout.rstrip().endswith("(csv), in 2 processes")
    alone, parted = _files(tmp_path / "one"), _files(tmp_path / "two")
    assert sorted(parted) == sorted(alone)
    assert _without_last_line(parted.pop("events.csv")) == alone.pop("events.csv")
    assert parted == alone
    refused = tandem("export", "--out", str(tmp_path / "x"), "--jobs", "0", url=database_url)
    assert refused.returncode == 2
    assert "--jobs" in refused.stderr
