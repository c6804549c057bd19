"""The export as an analyst reads it, with pandas: a small study (one participant allocated and
answering, one withdrawn, one erased, one opted out; questions left pending; messages holding
names, phone numbers, e-mail addresses and provider ids), exported plain and pseudonymised,
each file read back and held to the codebook, its times parsed, its statuses settled, and the
pseudonymised files searched for anything that names a participant."""

from __future__ import annotations

import json
import re
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest

from bot.core.clock import FakeClock
from bot.reporting.codebook import documents
from bot.reporting.export import export
from bot.store.event_store import EventStore
from bot.store.event_types import MessageReceived, MessageSent
from bot.store.event_types.decisions import DecisionFailed, DecisionMade, DecisionOutcome
from bot.store.event_types.interventions import MeasurementRecorded
from bot.store.event_types.messages import Media, MessageQueued
from bot.store.event_types.participants import (
    ParticipantErased,
    ParticipantOptedOut,
    ParticipantWithdrawn,
)
from bot.store.event_types.studies import ParticipantAllocated
from bot.store.event_types.timers import MeasurementAsked
from bot.store.events import EventData, NewEvent, participant_stream
from tests.factories import enrolled
from tests.modules.step_harness import FIXTURES

ALICE = "00000000-0000-4000-8000-0000000000a1"
BOB = "00000000-0000-4000-8000-0000000000b2"
CARLA = "00000000-0000-4000-8000-0000000000c3"
DAN = "00000000-0000-4000-8000-0000000000d4"
PEOPLE = {
    ALICE: ("Alice Tremblay", "+15145550199", "America/Toronto"),
    BOB: ("Bob Singh", "+919876543210", "Asia/Kolkata"),
    CARLA: ("Carla Dupont", "+33612345678", "Europe/Paris"),
    DAN: ("Dan Okafor", "+447700900123", "Europe/London"),
}
# Ways the participants' details are written in their messages, and the provider's ids.
SECRETS = [
    *(part for name, _phone, _tz in PEOPLE.values() for part in name.split()),
    *(phone for _name, phone, _tz in PEOPLE.values()),
    "(514) 555-0199", "514.555.0199", "98765 43210", "alice@example.org", "bob.singh@mail.in",
    "SM0123456789abcdef0123456789abcd", "SMfedcba9876543210fedcba98765432",
    "MM00112233445566778899aabbccddeeff",
]  # fmt: skip
START = datetime(2026, 10, 30, 12, 0, tzinfo=UTC)  # Toronto and Paris change offset after it
FEELINGS = ("Good", "Okay", "Bad")
FORMULA = '=HYPERLINK("http://example.org/x","click")'


def _study(store: EventStore, clock: FakeClock) -> None:
    def append(pid: str, at: datetime, *payloads: EventData) -> None:
        clock.set(at)
        store.append(participant_stream(pid), [NewEvent(p, at) for p in payloads])

    for n, (pid, (name, phone, tz)) in enumerate(PEOPLE.items()):
        profile_name = {"intervention": "good", "name": name, "timezone": tz}
        append(
            pid,
            START + timedelta(minutes=n),
            enrolled(participant_id=pid, phone=phone, **profile_name),
        )
    sms = {"to_address": "+15005550006", "channel": "sms"}
    to_alice = {"to_address": PEOPLE[ALICE][1], "channel": "sms"}
    allocated = ParticipantAllocated(
        study="walking", arm="coaching", method="blocks", sequence="walking/1", number=1,
        probabilities={"coaching": 0.5, "control": 0.5},
        conditional={"coaching": 0.5, "control": 0.5},
        stratum="age=18-29", block=1, block_size=4, position=1, seed="f00d",
        baseline={"age_band": "18-29", "steps": 4200},
    )  # fmt: skip
    append(ALICE, START + timedelta(hours=1), allocated)
    hello = "Hi, it's Alice Tremblay: call me on (514) 555-0199 or 514.555.0199, alice@example.org"
    media = [
        Media(
            url="https://api.twilio.com/Messages/MM00112233445566778899aabbccddeeff",
            content_type="image/jpeg",
        )
    ]
    day = START + timedelta(days=2)  # after the clocks change: other offsets
    first = MessageReceived(
        message_sid="SM0123456789abcdef0123456789abcd",
        body=hello,
        media=media,
        from_address=PEOPLE[ALICE][1],
        **sms,
    )
    append(ALICE, day, first)
    reply = MessageQueued(outbox_id="ob-1", body="Hi Alice Tremblay! =SUM(A1)", **to_alice)
    sent = MessageSent(outbox_id="ob-1", provider_sid="SMfedcba9876543210fedcba98765432")
    append(ALICE, day + timedelta(seconds=1, microseconds=250000), reply, sent)
    for n, text in enumerate((FORMULA, "-5", "@home")):
        said = MessageReceived(
            message_sid=f"SMf{n}", body=text, from_address=PEOPLE[ALICE][1], **sms
        )
        append(ALICE, day + timedelta(minutes=n + 1), said)
    for pid in PEOPLE:
        for question, hours in (("feeling", 3), ("mood", 4)):
            ask = MessageQueued(
                outbox_id=f"{pid[-2:]}-{question}",
                body="?",
                kind="prompt",
                to_address=PEOPLE[pid][1],
                channel="sms",
            )
            asked = MeasurementAsked(
                measurement=question,
                timer_id=f"t-{pid[-2:]}-{question}",
                outbox_id=f"{pid[-2:]}-{question}",
                answer_by=day + timedelta(days=9),
            )
            append(pid, day + timedelta(hours=hours), ask, asked)
    append(
        ALICE,
        day + timedelta(hours=5),
        MeasurementRecorded(measurement="feeling", value="Okay", outbox_id=f"{ALICE[-2:]}-feeling"),
    )
    bob_says = MessageReceived(
        message_sid="SM1",
        body="Bob Singh here, 98765 43210, bob.singh@mail.in",
        from_address=PEOPLE[BOB][1],
        **sms,
    )
    append(BOB, day + timedelta(hours=6), bob_says)
    gone = ParticipantWithdrawn(reason="Bob Singh moved away", requested_by="participant")
    append(BOB, day + timedelta(hours=7), gone)
    append(
        CARLA,
        day + timedelta(hours=7),
        ParticipantErased(reason="asked", requested_by="participant"),
    )
    stop = MessageReceived(
        message_sid="SM2", body="STOP", keyword="STOP", from_address=PEOPLE[DAN][1], **sms
    )
    append(
        DAN, day + timedelta(hours=8), stop, ParticipantOptedOut(source="keyword", keyword="STOP")
    )
    for n, (pid, available) in enumerate(((ALICE, True), (ALICE, False), (BOB, True))):
        append(pid, day + timedelta(hours=5, minutes=n), _point(n, available))
    append(ALICE, day + timedelta(hours=7), _outcome(0))
    append(ALICE, day + timedelta(hours=7, minutes=5), DecisionFailed(
        decision="nudge", index=3, reason="the probabilities sum to 1.2, not 1"
    ))  # fmt: skip


# The fixture's decision file (written by the `interventions` fixture).
NUDGE = """---
when: {times: ["14:00"]}
options:
  - {name: nothing, probability: 0.4}
  - {name: tip, send: "A short walk?", probability: 0.6}
outcome: {reply: yes/no, within: 1h}
moderators:
  turns: {type: int, value: step.turns}
---
"""


def _point(index: int, available: bool) -> DecisionMade:
    at = START + timedelta(days=2, hours=5)  # noon in Toronto (EST by then), day 2
    return DecisionMade(
        intervention="good", decision="nudge", index=index, scheduled_for=at,
        available=available, unavailable_reason=None if available else "quiet_hours",
        probabilities={"nothing": 0.4, "tip": 0.6} if available else {},
        option="tip" if available else None, u=0.45 if available else None,
        moderators={"turns": 3, "retired": True},
    )  # fmt: skip


def _outcome(index: int) -> DecisionOutcome:
    return DecisionOutcome(
        decision="nudge", index=index, status="observed", value=True, latency_seconds=90
    )


@pytest.fixture
def interventions(tmp_path: Path) -> Path:
    """The good fixture with an options question besides its scale."""
    root = tmp_path / "interventions"
    shutil.copytree(FIXTURES / "good", root / "good")
    (root / "good" / "questions" / "feeling.md").write_text(
        "---\ntitle: Feeling\ntext: How do you feel?\nanswer: options\n"
        f"options: [{', '.join(FEELINGS)}]\nschedule: '09:00'\nanswer_window: 2h\n"
        "thanks: Thanks.\n---\n",
        encoding="utf-8",
    )
    (root / "good" / "decisions").mkdir()
    (root / "good" / "decisions" / "nudge.md").write_text(NUDGE, encoding="utf-8")
    return root


def _exported(
    store: EventStore, clock: FakeClock, tmp_path: Path, interventions: Path, **options: bool
) -> tuple[Path, dict[str, pd.DataFrame], dict]:
    _study(store, clock)
    out = tmp_path / ("pseudonymised" if options else "plain")
    books = documents(interventions, ["good"])
    assert json.loads(books["codebook.json"])["unavailable"] == {}
    export(store, out, "csv", documents=books, **options)
    book = json.loads((out / "codebook.json").read_text(encoding="utf-8"))
    frames = {p.name: pd.read_csv(p, dtype=str) for p in sorted(out.glob("*.csv"))}
    return out, frames, book


def test_every_column_of_every_file_is_in_the_codebook_and_every_codebook_column_in_its_file(
    store: EventStore, clock: FakeClock, tmp_path: Path, interventions: Path
) -> None:
    _out, frames, book = _exported(store, clock, tmp_path, interventions)
    described = {name: [c["name"] for c in columns] for name, columns in book["files"].items()}
    assert sorted(described) == sorted(frames)
    for name, frame in frames.items():
        assert list(frame.columns) == described[name], name
    assert "baseline_age_band" in described["participants.csv"]
    assert {"p_coaching", "conditional_p_control"} <= set(described["allocations.csv"])
    assert {"p_nothing", "p_tip", "mod_turns", "undeclared"} <= set(described["decisions.csv"])


def test_every_decision_point_is_a_row_with_its_probabilities_outcome_and_moderators(
    store: EventStore, clock: FakeClock, tmp_path: Path, interventions: Path
) -> None:
    _out, frames, book = _exported(store, clock, tmp_path, interventions)
    rows = frames["decisions.csv"]
    assert len(rows) == 4  # the unavailable point and the failed one included
    first, unavailable, failed, bob = rows.itertuples()  # by participant, then as made
    assert (first.participant_id, first.arm, first.option, first.p_tip) == (
        ALICE,
        "coaching",
        "tip",
        "0.6",
    )
    assert (first.outcome_value, first.outcome_status, first.mod_turns) == ("1", "observed", "3")
    assert (first.at_local_naive, first.day_in_study) == ("2026-11-01T12:00:00", "2")
    assert json.loads(first.undeclared) == {"mod_retired": 1}  # no decision file names it
    assert (unavailable.available, unavailable.unavailable_reason) == ("false", "quiet_hours")
    assert pd.isna(unavailable.p_tip) and pd.isna(unavailable.outcome_status)
    assert (bob.outcome_status, bob.participant_id) == ("missing", BOB)  # he withdrew
    assert (failed.unavailable_reason, failed.available) == ("failed", "false")
    options = [v for v in book["variables"] if v["kind"] == "decision option"]
    assert [(v["name"], v["appears_in"]) for v in options] == [
        ("decisions.nudge.nothing", "decisions.csv p_nothing (decision == nudge)"),
        ("decisions.nudge.tip", "decisions.csv p_tip (decision == nudge)"),
    ]


def test_naive_local_and_utc_columns_parse_with_pandas_across_offsets(
    store: EventStore, clock: FakeClock, tmp_path: Path, interventions: Path
) -> None:
    _out, frames, _book = _exported(store, clock, tmp_path, interventions)
    parsed = 0
    for name, frame in frames.items():
        for column in frame.columns:
            values = frame[column].dropna()
            if column.endswith("_local_naive"):
                times = pd.to_datetime(values)  # no format, no utc: one format throughout
                assert times.dt.tz is None, (name, column)
            elif column.endswith("_utc") or column in ("occurred_at", "recorded_at"):
                times = pd.to_datetime(values, utc=True, format="ISO8601")
            else:
                continue
            parsed += len(times)
    assert parsed > 50
    messages = frames["messages.csv"]
    # the same instants, on the participants' wall clocks across a change of offset
    offsets = {text[-6:] for text in frames["results.csv"]["asked_local"]}
    assert len(offsets) == 4 and messages["created_at_local_naive"].iloc[0] == "2026-11-01T07:00:00"


def test_no_measurement_of_a_withdrawn_or_erased_participant_is_left_pending(
    store: EventStore, clock: FakeClock, tmp_path: Path, interventions: Path
) -> None:
    _out, frames, _book = _exported(store, clock, tmp_path, interventions)
    results = frames["results.csv"]
    status = {(r.participant_id, r.question): r.status for r in results.itertuples()}
    assert status == {
        (ALICE, "feeling"): "answered", (ALICE, "mood"): "pending",
        (BOB, "feeling"): "cancelled", (BOB, "mood"): "cancelled",
        (CARLA, "feeling"): "cancelled", (CARLA, "mood"): "cancelled",
        (DAN, "feeling"): "pending", (DAN, "mood"): "pending",
    }  # fmt: skip


def test_an_options_answer_carries_its_code_and_its_label(
    store: EventStore, clock: FakeClock, tmp_path: Path, interventions: Path
) -> None:
    _out, frames, _book = _exported(store, clock, tmp_path, interventions)
    results = frames["results.csv"]
    [answered] = results[results.status == "answered"].itertuples()
    assert (answered.value, answered.value_code, answered.value_label) == ("Okay", "2", "Okay")


def test_participants_carry_their_lifecycle_and_allocation(
    store: EventStore, clock: FakeClock, tmp_path: Path, interventions: Path
) -> None:
    _out, frames, _book = _exported(store, clock, tmp_path, interventions)
    people = frames["participants.csv"].set_index("participant_id")
    assert people.loc[BOB, "withdrawn_reason"] == "Bob Singh moved away"
    assert people.loc[BOB, "withdrawn_at_local_naive"] == "2026-11-02T00:30:00"
    assert (people.loc[CARLA, "erased_reason"], people.loc[DAN, "opted_out_reason"]) == (
        "asked",
        "keyword",
    )
    assert people.loc[DAN, "opted_out_at_utc"] == "2026-11-01T20:00:00+00:00"
    alice = people.loc[ALICE]
    assert (alice.study, alice.arm, alice.stratum) == ("walking", "coaching", "age=18-29")
    assert (alice.baseline_age_band, alice.baseline_steps) == ("18-29", "4200")
    assert people["withdrawn_at_utc"].notna().sum() == 1
    [allocation] = frames["allocations.csv"].itertuples()
    assert (allocation.participant_id, allocation.p_coaching, allocation.block_size) == (
        ALICE,
        "0.5",
        "4",
    )


def test_a_pseudonymised_export_holds_no_name_phone_e_mail_or_provider_id(
    store: EventStore, clock: FakeClock, tmp_path: Path, interventions: Path
) -> None:
    out, frames, book = _exported(store, clock, tmp_path, interventions, pseudonymise=True)
    written = "\n".join(p.read_text(encoding="utf-8") for p in sorted(out.iterdir()))
    found = [s for s in SECRETS if re.search(rf"(?<!\w){re.escape(s)}(?!\w)", written, re.I)]
    assert found == []
    texts = list(frames["messages.csv"]["text"])
    assert "Hi, it's [name]: call me on [phone] or [phone], [email]" in texts
    for name, frame in frames.items():  # what it writes, the codebook describes
        assert list(frame.columns) == [c["name"] for c in book["files"][name]], name


def test_a_cell_a_spreadsheet_would_run_is_written_after_a_quote(
    store: EventStore, clock: FakeClock, tmp_path: Path, interventions: Path
) -> None:
    _out, frames, _book = _exported(store, clock, tmp_path, interventions)
    texts = list(frames["messages.csv"]["text"])
    assert "'" + FORMULA in texts and "'@home" in texts
    assert "-5" in texts and "Hi Alice Tremblay! =SUM(A1)" in texts  # a number; not at the start
