"""A replay check in parts, by worker processes (bot.store.replay, bot.store.jobs): the report
one process gives, in one snapshot, and one process again when the parts are not sound."""

from __future__ import annotations

import multiprocessing
import uuid
from typing import Any

import pytest
from sqlalchemy import delete, insert, select, update

from bot.core.clock import FakeClock
from bot.store import replay as replay_module
from bot.store.event_store import EventStore
from bot.store.event_types import MessageReceived
from bot.store.event_types.alerts import AlertAcknowledged, AlertRaised
from bot.store.event_types.staff import StaffAdded
from bot.store.events import NewEvent, participant_stream
from bot.store.jobs import CannotFork, Workers
from bot.store.projections.alerts import PROJECTION
from bot.store.projections.staff import staff_stream
from bot.store.replay import Difference, ReplayReport, _Checked, _merge, check, repair
from bot.store.schema import outbox, participants, staff
from tests.cli.test_store_commands import tandem
from tests.factories import enrolled
from tests.reporting.test_export_jobs import _study_of_five, counted_parts, none_claimed
from tests.store.test_replay import unknown_event

LOW, HIGH = "00000000-0000-4000-8000-000000000000", "ffffffff-ffff-4fff-8fff-ffffffffffff"


@pytest.fixture
def parts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Parts of one participant allowed; the processes each check's chunks were shared among
    (its own and its workers), as the workers begin."""
    return counted_parts(monkeypatch, replay_module)


def _study(store: EventStore, clock: FakeClock) -> list[str]:
    """Five participants (messages, results, forms, timers; system and orphan streams), an
    alert of a participant acknowledged on their stream, one of the system's, and a staff
    account: rows of participants in every part, and rows of no participant."""
    ids = _study_of_five(store, clock)
    stream = participant_stream(ids[0])
    raised = AlertRaised(alert_id="a-1", kind="crisis", summary="said something worrying")
    store.append(stream, [NewEvent(raised)])
    store.append(
        stream, [NewEvent(AlertAcknowledged(alert_id="a-1", by="+14165550199", via="sms"))]
    )
    system = AlertRaised(alert_id="a-2", kind="send_unknown", summary="a send may have failed")
    store.append("system", [NewEvent(system)])
    added = StaffAdded(email="rae@example.org", role="researcher", by="cli")
    store.append(staff_stream("rae@example.org"), [NewEvent(added)])
    return ids


def _said(report: ReplayReport) -> tuple[Any, ...]:
    described = [d.describe() for d in report.differences]
    return report.events, report.counts, described, report.unreadable


def test_a_check_in_parts_reports_what_one_process_reports(
    store: EventStore, clock: FakeClock, parts: list[int]
) -> None:
    _study(store, clock)
    one = check(store)
    assert parts == []
    three = check(store, jobs=3)
    assert parts == [3] and (one.workers, three.workers) == (0, 2)
    assert three.again is None and one.clean and three.clean
    assert _said(three) == _said(one)
    assert three.counts["alerts"] == 2 and three.counts["staff"] == 1
    assert three.events == len(list(store.read_all()))


def test_a_check_in_parts_finds_and_repairs_the_differences_one_process_finds(
    store: EventStore, clock: FakeClock, parts: list[int]
) -> None:
    ids = _study(store, clock)
    with store.engine.begin() as conn:
        conn.execute(  # changed: a participant's row, and a row of no participant
            update(participants).where(participants.c.participant_id == ids[0]).values(name="M")
        )
        conn.execute(update(outbox).where(outbox.c.participant_id.is_(None)).values(body="x"))
        conn.execute(delete(staff))  # missing: of no participant
        theirs = outbox.c.participant_id == ids[2]
        conn.execute(delete(outbox).where(theirs))  # missing: a participant's
        kept = conn.execute(select(outbox).where(outbox.c.participant_id == ids[1])).first()
        extra = {**kept._mapping, "outbox_id": str(uuid.uuid4())}
        conn.execute(insert(outbox).values(extra))  # extra: never repaired
    one = check(store)
    three = check(store, jobs=3)
    assert three.workers == 2 and three.again is None
    assert _said(three) == _said(one)
    kinds = {(d.projection, d.kind) for d in three.differences}
    assert kinds == {
        ("participants", "changed"),
        ("outbox", "changed"),
        ("outbox", "missing"),
        ("outbox", "extra"),
        ("staff", "missing"),
    }
    assert repair(store, three) == len(three.differences) - 1  # all but the extra row
    left = check(store, jobs=3)
    assert [(d.projection, d.key, d.kind) for d in left.differences] == [
        ("outbox", extra["outbox_id"], "extra")
    ]


def test_events_that_cannot_be_read_are_listed_in_order_of_seq_from_every_part(
    store: EventStore, clock: FakeClock, parts: list[int]
) -> None:
    ids = _study(store, clock)
    now = store.clock.now()
    with store.engine.begin() as conn:
        for participant_id in (ids[2], ids[0], ids[1]):
            stream = participant_stream(participant_id)
            version = conn.execute(
                select(participants.c.version).where(
                    participants.c.participant_id == participant_id
                )
            ).scalar_one()
            unknown_event(conn, stream, version + 1, now)
    one = check(store)
    three = check(store, jobs=3)
    assert len(three.unreadable) == 3 and three.workers == 2
    assert _said(three) == _said(one)
    seqs = [int(line.split(":")[0].removeprefix("seq ")) for line in three.unreadable]
    assert seqs == sorted(seqs)


def _alert_across_parts(store: EventStore) -> None:
    """An alert raised on LOW's stream (the first part) and acknowledged on HIGH's (the last):
    one row that events of two parts touch."""
    raised = AlertRaised(alert_id="shared", kind="crisis", summary="worrying")
    store.append(participant_stream(LOW), [NewEvent(raised)])
    acknowledged = AlertAcknowledged(alert_id="shared", by="+14165550199", via="sms")
    store.append(participant_stream(HIGH), [NewEvent(acknowledged)])


def test_events_of_two_parts_on_one_row_send_the_check_to_one_process(
    store: EventStore, parts: list[int]
) -> None:
    low, high = enrolled(participant_id=LOW), enrolled(participant_id=HIGH, phone="+442071838750")
    for person in (low, high):
        store.append(participant_stream(person.participant_id), [person])
    _alert_across_parts(store)
    one = check(store)
    counted: list[int] = []
    two = check(store, counted.append, jobs=2)
    assert parts == [2]
    assert two.again == "events of two parts touch one row (alerts shared)"
    # the parts' events are taken back before one process counts them again
    assert sum(counted) == two.events == one.events and min(counted) == -two.events
    assert two.workers == 0  # the report is one process's
    assert _said(two) == _said(one) and two.clean
    assert two.rebuilt["alerts"]["shared"]["status"] == "acknowledged"


def _checked(
    differences: list[Any] = (), strays: list[str] = (), touched: set[str] = frozenset()
) -> _Checked:
    report = ReplayReport(rebuilt={"alerts": {}}, differences=list(differences))
    return _Checked(report, {"alerts": {}}, {"alerts": set(touched)}, list(strays), [])


def test_a_row_rebuilt_out_of_its_part_or_told_apart_by_two_parts_is_not_trusted() -> None:
    stray = ReplayReport()
    _merge([PROJECTION], stray, [_checked(strays=["alerts a-1"]), _checked()], {"alerts": {}})
    assert stray.again == "a part rebuilt a row of a participant out of its range (alerts a-1)"
    torn = ReplayReport(rebuilt={"alerts": {}})
    missing, extra = Difference("alerts", "a-1", "missing"), Difference("alerts", "a-1", "extra")
    _merge([PROJECTION], torn, [_checked([missing]), _checked([extra])], {"alerts": {}})
    assert torn.again == "the parts disagree about one row (alerts a-1)"
    sound = ReplayReport(rebuilt={"alerts": {}})
    _merge([PROJECTION], sound, [_checked([missing], touched={"a-1"}), _checked()], {"alerts": {}})
    assert sound.again is None and sound.differences == [missing]


def test_an_event_appended_while_the_workers_fold_is_in_no_part(
    store: EventStore, clock: FakeClock, parts: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = _study(store, clock)
    before = len(list(store.read_all()))
    fold = replay_module._fold

    def appending(*args: Any, **kwargs: Any) -> Any:  # in each chunk, in its snapshot
        text = MessageReceived(
            message_sid=f"SM{uuid.uuid4().hex}",
            from_address="+14165550101",
            to_address="+15005550006",
            channel="sms",
            body="written during the check",
        )
        store.append(participant_stream(ids[0]), [NewEvent(text)])
        return fold(*args, **kwargs)

    chunks: list[int] = []
    parts_of = replay_module._parts

    def counted(conn: Any, shares: list[float]) -> Any:
        made = parts_of(conn, shares)
        chunks.append(len(made))
        return made

    monkeypatch.setattr(replay_module, "_fold", appending)
    monkeypatch.setattr(replay_module, "_parts", counted)
    three = check(store, jobs=3)
    assert three.workers == 2 and three.again is None
    assert three.events == before and three.clean
    # each chunk's append committed, whichever process folded it
    assert len(list(store.read_all())) == before + chunks[0] >= before + 3


def test_a_workers_failure_is_the_checks(
    store: EventStore, clock: FakeClock, parts: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    _study(store, clock)

    def failing(*_args: Any, **_kwargs: Any) -> Any:
        raise LookupError("no fold today")

    monkeypatch.setattr(replay_module, "_fold", failing)
    monkeypatch.setattr(Workers, "claimed", none_claimed)  # the worker takes every chunk
    with pytest.raises(LookupError, match="no fold today") as failed:
        check(store, jobs=2)
    assert any("in replay worker" in note for note in failed.value.__notes__)
    with pytest.raises(ValueError, match="jobs must be 1 or more"):
        check(store, jobs=0)


def test_jobs_of_a_replay_on_a_platform_that_cannot_fork_are_refused(
    store: EventStore, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    _study(store, clock)
    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    with pytest.raises(CannotFork, match="cannot fork: replay with one"):
        check(store, jobs=2)
    assert check(store).clean  # one process needs no fork


def test_tandem_replay_jobs_checks_in_parts_and_says_so(
    store: EventStore, database_url: str
) -> None:
    people = [enrolled(phone=f"+1416555{n:04d}") for n in range(400)]  # two parts of 200
    with store.transaction() as tx:
        for person in people:
            tx.append(participant_stream(person.participant_id), [NewEvent(person)])
    clean = tandem("replay", "--check", "--jobs", "2", url=database_url)
    assert clean.returncode == 0, clean.stderr
    assert "replayed 400 events into 400 participants" in clean.stdout
    assert clean.stdout.rstrip().endswith("0 differences, 0 unreadable, in 2 processes")
    with store.engine.begin() as conn:
        conn.execute(
            update(participants)
            .where(participants.c.participant_id == people[-1].participant_id)
            .values(timezone="Europe/Paris")
        )
    dirty = tandem("replay", "--check", "--jobs", "2", url=database_url)
    assert dirty.returncode == 1
    assert f"participants {people[-1].participant_id}: timezone" in dirty.stdout
    refused = tandem("replay", "--jobs", "0", url=database_url)
    assert refused.returncode == 2 and "--jobs" in refused.stderr


def test_tandem_replay_progress_counts_a_check_made_again_once(
    store: EventStore, database_url: str
) -> None:
    people = [enrolled(phone=f"+1416555{n:04d}") for n in range(398)]
    people += [enrolled(participant_id=LOW, phone="+14165559998")]
    people += [enrolled(participant_id=HIGH, phone="+14165559999")]  # the first and last parts
    with store.transaction() as tx:
        for person in people:
            tx.append(participant_stream(person.participant_id), [NewEvent(person)])
    _alert_across_parts(store)
    result = tandem("replay", "--check", "--jobs", "2", "--progress", url=database_url)
    assert result.returncode == 0, result.stderr
    assert "checked again in one process: events of two parts touch one row" in result.stdout
    assert "replayed 402 events" in result.stdout
    final = result.stderr.replace("\r", "\n").strip().splitlines()[-1]
    assert final.startswith("402ev "), result.stderr  # not the parts' 402 and then 402 more
