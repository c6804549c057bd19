"""The events file made from the per-participant read: every event read once, written in
global order however the reads and the run files fall (bot.reporting.merge)."""

from __future__ import annotations

import csv
import random
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.core.clock import FakeClock
from bot.reporting import export as export_module
from bot.reporting import merge as export_runs
from bot.reporting.export import export
from bot.reporting.merge import SortedRuns
from bot.store.event_store import EventStore
from bot.store.event_types import MessageReceived
from bot.store.event_types.messages import MessageQueued
from bot.store.events import NewEvent, new_id, participant_stream
from tests.factories import enrolled

START = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def test_lines_come_back_in_order_of_seq_across_runs_and_what_is_held(
    tmp_path: Path,
) -> None:
    shuffled = random.Random(7)
    seqs = list(range(1, 400))
    shuffled.shuffle(seqs)
    lines = {seq: f'{seq},"a cell\r\nover two lines, 🎉 ""quoted"""\r\n' for seq in range(1, 400)}
    with SortedRuns(tmp_path, budget=500) as runs:
        for seq in seqs:
            runs.add(seq, lines[seq])
        assert len(runs.runs) > 10  # the budget made it write runs
        assert runs.held  # and holds the last lines still
        modes = {stat.S_IMODE(path.stat().st_mode) for path in runs.runs}
        merged = [line.decode() for block in runs.merged() for line in block]
    assert merged == [lines[seq] for seq in range(1, 400)]
    assert modes == {0o600}
    assert list(tmp_path.iterdir()) == []  # the run files are gone


def test_run_files_are_removed_when_the_export_fails_midway(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), SortedRuns(tmp_path, budget=1) as runs:
        runs.add(2, "two\r\n")
        runs.add(1, "one\r\n")
        assert len(list(tmp_path.iterdir())) == 2
        raise RuntimeError("the snapshot went away")
    assert list(tmp_path.iterdir()) == []


def _queued(phone: str) -> MessageQueued:
    return MessageQueued(outbox_id=new_id(), to_address=phone, channel="sms", body="Well done!")


def _events_of_many_streams(store: EventStore, clock: FakeClock) -> list[str]:
    """Three participants whose messages interleave, the system stream between them, and a
    stream named for a participant who has no participants row; returns the participant ids."""
    people = [enrolled(phone=f"+1416555{n:04d}") for n in range(3)]
    for n, person in enumerate(people):
        clock.set(START + timedelta(minutes=n))
        store.append(participant_stream(person.participant_id), [NewEvent(person)])
    orphan = participant_stream(new_id())
    for minute in range(6):
        clock.set(START + timedelta(hours=1, minutes=minute))
        person = people[minute % 3]
        text = MessageReceived(
            message_sid=f"SM{minute:032d}",
            from_address=person.phone,
            to_address="+15005550006",
            channel="sms",
            body=f"walked, day {minute}\nfelt good",
        )
        reply = _queued(person.phone)
        store.append(participant_stream(person.participant_id), [NewEvent(text), NewEvent(reply)])
        if minute % 2:
            store.append("system", [NewEvent(_queued(person.phone), meta={"actor": "test"})])
        if minute == 3:
            store.append(orphan, [NewEvent(_queued(person.phone))])
    return [person.participant_id for person in people]


def _stored_seqs(store: EventStore, **where: Any) -> list[int]:
    return [ev.seq for ev in store.read_all() if all(f(ev) for f in where.values())]


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_the_events_file_is_the_same_with_run_files_as_without(
    store: EventStore, clock: FakeClock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: Any
) -> None:
    _events_of_many_streams(store, clock)
    export(store, tmp_path / "held", fmt)
    monkeypatch.setattr(export_runs, "RUN_BYTES", 200)  # a run every line or two
    written: list[int] = []
    spill = SortedRuns._spill

    def counted(self: SortedRuns) -> None:
        written.append(len(self.held))
        spill(self)

    monkeypatch.setattr(SortedRuns, "_spill", counted)
    export(store, tmp_path / "spilled", fmt)
    assert len(written) > 10  # the second export did write runs
    held = (tmp_path / "held" / f"events.{fmt}").read_text(encoding="utf-8")
    spilled = (tmp_path / "spilled" / f"events.{fmt}").read_text(encoding="utf-8")
    # the same, and after it the first export's own record (export.written), one line
    assert spilled.startswith(held)
    assert "export.written" in spilled[len(held) :]
    assert spilled[len(held) :].count("\n") == 1
    assert sorted(p.name for p in (tmp_path / "spilled").iterdir()) == sorted(
        p.name for p in (tmp_path / "held").iterdir()
    )  # no run file left behind


def _seqs_of(path: Path) -> list[int]:
    with path.open(encoding="utf-8", newline="") as file:
        return [int(row["seq"]) for row in csv.DictReader(file)]


def test_the_events_file_holds_every_stream_in_global_order(
    store: EventStore, clock: FakeClock, tmp_path: Path
) -> None:
    _events_of_many_streams(store, clock)
    everything = _stored_seqs(store)
    export(store, tmp_path / "all", "csv")
    # the system stream's events and the stream with no participants row are in it too
    assert _seqs_of(tmp_path / "all" / "events.csv") == everything


def test_the_streams_of_no_participant_are_found_and_read_a_few_at_a_time(
    store: EventStore, clock: FakeClock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = _events_of_many_streams(store, clock)
    mine = {participant_stream(i) for i in ids}
    every_stream = {ev.stream_id for ev in store.read_all()}
    with store.reading() as conn:
        others = export_module._other_streams(conn)
    assert set(others) == every_stream - mine
    assert "system" in others and len(others) == 2  # the system's and the orphan's
    monkeypatch.setattr(export_module, "_OTHER_STREAMS", 1)  # a query for each stream
    export(store, tmp_path / "one-by-one", "csv")
    assert _seqs_of(tmp_path / "one-by-one" / "events.csv") == _stored_seqs(store)[:-1]


def test_the_events_file_of_some_participants_from_a_time_is_theirs_in_order(
    store: EventStore, clock: FakeClock, tmp_path: Path
) -> None:
    ids = _events_of_many_streams(store, clock)
    since = START + timedelta(hours=1, minutes=2)
    streams = {participant_stream(i) for i in ids[:2]}
    wanted = _stored_seqs(
        store, stream=lambda ev: ev.stream_id in streams, since=lambda ev: ev.occurred_at >= since
    )
    export(store, tmp_path / "some", "csv", since=since, participant_ids=ids[:2])
    assert _seqs_of(tmp_path / "some" / "events.csv") == wanted
    assert len(wanted) == 4  # minutes 2, 3 and 4 of two of the three participants


def test_an_export_reads_each_event_row_once(
    store: EventStore, clock: FakeClock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _events_of_many_streams(store, clock)
    read: list[int] = []

    def counting(reads: Any) -> Any:
        def counted(*args: Any, **kwargs: Any) -> Any:
            for row in reads(*args, **kwargs):
                read.append(row.seq)
                yield row

        return counted

    # the participants' events, read by batch; the events of no participant, in order of seq
    monkeypatch.setattr(export_module, "opened_raw", counting(export_module.opened_raw))
    monkeypatch.setattr(export_module, "opened_scanned", counting(export_module.opened_scanned))
    export(store, tmp_path / "out", "csv")
    stored = _stored_seqs(store)
    assert sorted(read) == stored[: len(read)]  # once each (export.written comes after)
    assert len(read) == len(stored) - 1


@pytest.mark.parametrize("block", [1, 3, 64])
def test_runs_of_several_blocks_merge_in_order_however_their_seqs_interleave(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    monkeypatch.setattr(export_runs, "BLOCK", block)
    shuffled = random.Random(block)
    seqs = list(range(1, 2001))
    added = seqs[:]
    shuffled.shuffle(added)
    lines = {seq: f'{seq},{"x" * shuffled.randrange(0, 40)},"é\r\n"\r\n' for seq in seqs}
    with SortedRuns(tmp_path, budget=3000) as runs:
        for seq in added[:1500]:
            runs.add(seq, lines[seq])
        assert len(runs.runs) > 5
        for seq in sorted(added[1500:]):  # as the events of no participant come: in order
            runs.add(seq, lines[seq])
        blocks = list(runs.merged())
    assert [line.decode() for one in blocks for line in one] == [lines[seq] for seq in seqs]
    assert all(blocks)  # no empty block


def test_a_run_file_cut_short_is_an_error_not_a_shorter_events_file(tmp_path: Path) -> None:
    with SortedRuns(tmp_path, budget=1) as runs:
        runs.add(1, "one\r\n")
        runs.add(2, "two\r\n")
        runs.add(3, "three\r\n")
        last = runs.runs[-1]
        last.write_bytes(last.read_bytes()[:-3])
        with pytest.raises(ValueError, match="cut short"):
            [line for block in runs.merged() for line in block]
