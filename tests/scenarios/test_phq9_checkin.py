"""The shipped PHQ-9 biweekly check-in on the real engine with no LLM: signed webhooks, a
shifted clock over three weeks. Items go one per message, answers are read by number or label,
each administration is scored and recorded (instruments.csv), the series goes on every 14 days
whatever happens (an answer in quiet hours, a missed administration), an administration due in
quiet hours is sent when they end, and item 9 above 0 leads to the safety step and an alert."""

from __future__ import annotations

import csv
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

from bot.reporting.export import export
from tests.scenarios.harness import TORONTO, Harness, local

CALM = ["0", "1", "0", "several days", "0", "1", "0", "0", "0"]  # total 3, item 9 = 0
AT_RISK = ["2", "2", "1", "2", "1", "2", "1", "1", "1"]  # total 13, item 9 = 1
QUIET = {"INTERVENTION": "phq9-checkin", "QUIET_HOURS": "21:00-08:00"}


def _answer(h: Harness, answers: list[str]) -> None:
    for reply in answers:
        h.text(reply)


def _started(h: Harness) -> list:
    return [e.occurred_at.astimezone(TORONTO) for e in h.events("instrument.started")]


def test_the_checkin_is_scored_and_goes_on_every_two_weeks(
    make_harness: Callable[..., Harness], tmp_path: Path
) -> None:
    h = make_harness(**QUIET)
    h.until(local("20:50"))
    h.enroll(name="Sam")
    sent = h.outbound()
    assert sent[0].startswith("Hi Sam! Every two weeks")
    assert "Little interest or pleasure in doing things" in sent[1]
    assert "Reply 0 Not at all, 1 Several days" in sent[1]

    h.until(local("21:05"))  # answered in quiet hours (21:00-08:00)
    h.text("seven")  # not an answer: asked again with the reason
    assert h.outbound()[-1].startswith("Sorry, I could not read that")
    _answer(h, CALM)

    done = h.data("instrument.completed")
    assert [(d.result["total"], d.result["band"], d.count) for d in done] == [(3, "minimal", 1)]
    assert h.outbound()[-1].startswith("Thank you. Your total this time is 3 out of 27 (minimal)")
    assert h.participant()["current_step"] == "between"

    h.until(local("20:55", days=14))
    assert [(at.day - local("08:00").day, at.hour, at.minute) for at in _started(h)] == [
        (0, 20, 50),
        (14, 20, 50),
    ]
    _answer(h, AT_RISK)
    done = h.data("instrument.completed")
    assert [(d.result["total"], d.result["items"]["i9"]) for d in done] == [(3, 0), (13, 1)]
    assert h.participant()["current_step"] == "safety"
    alerts = h.data("alert.raised")
    assert len(alerts) == 1 and "item 9" in alerts[0].summary
    assert "988" in h.outbound()[-1]

    h.until(local("12:00", days=21))  # three weeks: the third administration is pending
    pending = h.timers(kind="instrument", status="scheduled")
    assert [t["due_at"].astimezone(TORONTO) for t in pending] == [local("20:50", days=28)]
    assert not h.requests  # no LLM call at any point

    export(h.store, tmp_path / "out", "csv")
    with (tmp_path / "out" / "instruments.csv").open(encoding="utf-8", newline="") as file:
        rows = list(csv.DictReader(file))
    assert [(r["administration"], r["status"], r["total"], r["band"]) for r in rows] == [
        ("1", "completed", "3", "minimal"),
        ("2", "completed", "13", "moderate"),
    ]
    assert rows[1]["answers"].startswith('{"i1": 2, "i2": 2')
    assert float(rows[0]["duration_minutes"]) == 15.0  # first item 20:50, last answer 21:05


def test_an_administration_due_in_quiet_hours_is_sent_when_they_end_and_a_miss_ends_nothing(
    make_harness: Callable[..., Harness],
) -> None:
    h = make_harness(**QUIET)
    h.until(local("21:30"))
    h.enroll()  # in quiet hours: the welcome (and the first item) wait for their end
    assert h.outbound() == []
    (held,) = [t for t in h.data("timer.scheduled") if t.kind == "greeting"]
    assert held.due_at == local("08:00", days=1)
    h.until(local("12:00", days=16))  # nothing answered

    assert [(at.day - local("08:00").day, at.hour, at.minute) for at in _started(h)] == [
        (1, 8, 0),
        (15, 8, 0),  # planned for 21:30 on day 14: deferred, never skipped
    ]
    # the first goes with the held welcome at 08:00; the series stays anchored at enrollment
    assert [t.reason for t in h.data("timer.deferred")] == []
    occasion = h.timers(kind="instrument", status="fired")[1]["payload"]["series"]
    planned = datetime.fromisoformat(occasion["planned"]).astimezone(TORONTO)
    assert (planned, occasion["deferred"]) == (local("21:30", days=14), True)
    # each is abandoned by its timer after 120 minutes of silence, and the step says so
    abandoned = h.events("instrument.abandoned")
    assert [e.data.reason for e in abandoned] == ["silence", "silence"]
    assert [e.occurred_at.astimezone(TORONTO).hour for e in abandoned] == [10, 10]
    told = [m for m in h.outbound() if m.startswith("We will leave these questions for now")]
    assert len(told) == 2
    assert len(h.timers(kind="instrument", status="scheduled")) == 1  # the series goes on


def test_silence_abandons_an_administration_by_timer_and_the_step_goes_on(
    make_harness: Callable[..., Harness],
) -> None:
    h = make_harness(INTERVENTION="phq9-checkin")
    h.enroll()
    h.advance(timedelta(minutes=30))
    h.text("1")
    answered_at = h.clock.now()
    h.advance(timedelta(hours=3))  # longer than abandon_after_minutes (120) after the answer
    abandoned = h.events("instrument.abandoned")
    assert [(e.data.reason, e.data.answers) for e in abandoned] == [("silence", {"i1": 1})]
    assert abandoned[0].occurred_at == answered_at + timedelta(minutes=120)  # not from the start
    assert h.participant()["step_counters"]["administering"] is None
    assert h.participant()["current_step"] == "between"  # `to: between when: abandoned.phq9`
    assert h.outbound()[-1].startswith("We will leave these questions for now")
    h.text("hello again")
    assert h.outbound()[-1].startswith("Thanks for your message. Your next check-in")
