"""Abandonment on silence is a durable timer: an administration left unanswered for its
instrument's `abandon_after_minutes` is recorded `instrument.abandoned` ("silence") by a timer
that a restarted process fires, it is a row of instruments.csv and a line of the console's
timeline, and the step's `abandoned.*` transition moves the conversation on."""

from __future__ import annotations

import csv
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from bot.reporting.export import export
from tests.console.conftest import PASSWORD, get, sign_in, staff_member
from tests.scenarios.harness import Harness


def test_a_restarted_process_abandons_the_silent_administration_and_shows_it(
    make_harness: Callable[..., Harness], tmp_path: Path
) -> None:
    h = make_harness(INTERVENTION="phq9-checkin", TANDEM_MASTER_KEY="k" * 40)
    h.enroll()
    h.advance(timedelta(minutes=10))
    h.text("2")
    h.advance(timedelta(minutes=20))
    h.text("1")
    answered_at = h.clock.now()
    [timer] = h.timers(kind="instrument_abandon", status="scheduled")
    assert timer["due_at"] == h.events("instrument.started")[0].occurred_at + timedelta(hours=2)

    # the process stops; a new one starts an hour later, over the same database
    h = h.restart(at=h.clock.now() + timedelta(hours=1))
    assert h.data("instrument.abandoned") == []  # an answer came 60 minutes ago: not yet
    h.advance(timedelta(hours=2))

    [event] = h.events("instrument.abandoned")
    abandoned = event.data
    assert (abandoned.reason, abandoned.answers) == ("silence", {"i1": 2, "i2": 1})
    assert event.occurred_at == answered_at + timedelta(hours=2)
    assert h.participant()["current_step"] == "between"
    assert h.outbound()[-1].startswith("We will leave these questions for now")
    reasons = [t.reason for t in h.data("timer.skipped")]
    assert reasons.count("answered since") == 1  # fired early once, timed again from "1"

    export(h.store, tmp_path / "out", "csv")
    with (tmp_path / "out" / "instruments.csv").open(encoding="utf-8", newline="") as file:
        rows = list(csv.DictReader(file))
    assert [(r["status"], r["answered"], r["total"]) for r in rows] == [("abandoned", "2", "")]

    staff_member(h.services, "researcher@example.org", "researcher")
    assert sign_in(h.client, "researcher@example.org", PASSWORD).status_code == 302
    page = get(h.client, f"/console/participants/{h.pid}").get_data(as_text=True)
    assert "instrument.abandoned" in page and "silence" in page


def test_an_administration_finished_in_time_leaves_its_timer_nothing_to_do(
    make_harness: Callable[..., Harness],
) -> None:
    h = make_harness(INTERVENTION="ema-craving")
    h.enroll()
    h.until(min(t["due_at"] for t in h.timers(kind="instrument", status="scheduled")))
    h.text("4")
    h.advance(timedelta(hours=1))
    assert h.data("instrument.abandoned") == []
    # ema-craving's prompts come at random times: the next one may have begun within the
    # hour, with a timer of its own; the first administration's timer is the earliest due.
    timer = min(h.timers(kind="instrument_abandon"), key=lambda t: t["due_at"])
    assert (timer["status"], [t.reason for t in h.data("timer.skipped")]) == (
        "skipped",
        ["finished"],
    )
