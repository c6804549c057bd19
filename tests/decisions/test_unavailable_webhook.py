"""Each engine reason for a decision point's unavailability, set off through the real paths of a
deployment (the signed Twilio webhook, the researcher API, the console's takeover service, the
worker and the scheduler on a fake clock): quiet hours, an opt-out by STOP, a staff takeover
and a withdrawal; and the withdrawal ends the participant's decision chain, recorded."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from bot.interventions.interpreter.applied import INTERVENTIONS
from bot.reporting.decision_file import decision_file_rows
from bot.services.takeover import hand_back, take_over
from bot.store.event_types.decisions import DecisionMade
from tests.scenarios.harness import Harness, local

STAFF = "staff:researcher@example.org"
TORONTO = ZoneInfo("America/Toronto")


def _window(at: datetime, start: str, end: str, days: int = 0) -> bool:
    return local(start, days) <= at < local(end, days)


def test_quiet_hours_stop_a_takeover_and_a_withdrawal_each_make_points_unavailable(
    make_harness: Callable[..., Harness], tmp_path: Path
) -> None:
    root = tmp_path / "interventions"
    shutil.copytree(INTERVENTIONS / "walk-mrt", root / "walk-mrt")
    config = root / "walk-mrt" / "intervention.yaml"  # quiet hours: the second window
    config.write_text(config.read_text().replace('"21:00-07:00"', '"10:24-12:48"'))
    h = make_harness(root, INTERVENTION="walk-mrt")
    assert h.enroll(name="Ana", intervention="walk-mrt").status_code == 201

    h.until(local("12:47"))
    take_over(h.store, h.pid, actor=STAFF, reason="a call")
    h.until(local("15:13"))
    hand_back(h.store, h.pid, actor=STAFF)
    h.settle()
    h.text("STOP")  # signed, through the webhook
    h.until(local("17:36"))
    h.text("START")
    h.until(local("12:00", days=1))
    withdrawn = h.api(
        "POST",
        f"/participants/{h.pid}/withdraw",
        {"reason": "moving", "requested_by": "participant"},
    )
    assert withdrawn.status_code == 200, withdrawn.get_data(as_text=True)
    h.until(local("20:00", days=3))

    points: list[DecisionMade] = h.data("decision.made")
    assert points, "no decision point was made"
    for point in points:
        at = point.scheduled_for
        if at >= local("12:00", days=1):
            expected = "withdrawn"  # the first of the engine's reasons
        elif _window(at, "12:47", "15:13"):
            expected = "takeover"  # before quiet hours in the engine's order (12:47-12:48)
        elif _window(at, "10:24", "12:48") or _window(at, "10:24", "12:48", 1):
            expected = "quiet_hours"
        elif _window(at, "15:13", "17:36"):
            expected = "opted_out"
        else:
            expected = point.unavailable_reason if point.unavailable_reason == "condition" else None
        assert point.unavailable_reason == expected, (at.astimezone(TORONTO), point)
    reasons = [p.unavailable_reason for p in points]
    assert {"quiet_hours", "takeover", "opted_out", "withdrawn"} <= set(reasons)
    # The withdrawal ends the chain: one point records it, and no decision timer is left.
    assert reasons.count("withdrawn") == 1 and reasons[-1] == "withdrawn"
    assert h.timers(kind="decision", status="scheduled") == []
    assert all(p.available == (p.unavailable_reason is None) for p in points)
    # decisions.csv's rows say the same, one per point.
    rows = decision_file_rows(h.events(), h.participant())
    assert [r["unavailable_reason"] for r in rows] == reasons
