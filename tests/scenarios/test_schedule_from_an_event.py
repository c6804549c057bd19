"""A schedule counted from an event, on the real engine: a PHQ-9 completed at 21:13 schedules
the next one 14 days after that completion (`from: phq9.completed`), which falls in quiet
hours and is sent when they end, and the chain goes on from each completion."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from tests.scenarios.harness import TORONTO, Harness, local

CONFIG = """title: From each completion
version: 1
root: welcome
instruments: [phq9]
quiet_hours: "21:00-08:00"
fallback: "Sorry, we could not answer just now."
"""
NEXT = """transitions:
  - to: between
    when: answered.phq9
    actions:
      - administer: phq9
        repeat: {every: 14 days, from: phq9.completed, offset: 14d, until: {count: 1}}
"""
WELCOME = f"---\ntitle: Welcome\nsay: Hi\non_enter:\n  - administer: phq9\n{NEXT}---\n"
BETWEEN = (
    "---\ntitle: Between\nsay: 'Total {{ instruments.phq9.last.total }}; next in 14 days.'\n"
    f"{NEXT}---\n"
)
CALM = ["0", "1", "0", "1", "0", "1", "0", "0", "0"]


def _folder(root: Path) -> Path:
    folder = root / "interventions" / "from-completion"
    (folder / "steps").mkdir(parents=True)
    (folder / "intervention.yaml").write_text(CONFIG)
    (folder / "steps" / "welcome.md").write_text(WELCOME)
    (folder / "steps" / "between.md").write_text(BETWEEN)
    return folder.parent


def _answer_all(h: Harness, last_at: datetime) -> None:
    for reply in CALM[:-1]:
        h.text(reply)
    h.until(last_at)
    h.text(CALM[-1])


def test_the_next_administration_counts_from_each_completion(
    make_harness: Callable[..., Harness], tmp_path: Path
) -> None:
    h = make_harness(_folder(tmp_path), INTERVENTION="from-completion", QUIET_HOURS="21:00-08:00")
    h.until(local("20:50"))
    h.enroll()
    _answer_all(h, local("21:13"))  # completed at 21:13, inside quiet hours
    assert h.outbound()[-1] == "Total 3; next in 14 days."

    [pending] = h.timers(kind="instrument", status="scheduled")
    series = pending["payload"]["series"]
    planned = datetime.fromisoformat(series["planned"]).astimezone(TORONTO)
    assert planned == local("21:13", days=14)  # 14 days after the completion, not enrollment
    assert pending["due_at"].astimezone(TORONTO) == local("08:00", days=15)  # deferred

    h.until(local("08:00", days=15))
    assert "Little interest or pleasure" in h.outbound()[-1]
    _answer_all(h, local("09:30", days=15))  # the second completion starts the next count
    [pending] = h.timers(kind="instrument", status="scheduled")
    assert pending["due_at"].astimezone(TORONTO) == local("09:30", days=29)
    started = [e.occurred_at.astimezone(TORONTO) for e in h.events("instrument.started")]
    assert started == [local("20:50"), local("08:00", days=15)]
    assert [e.occurred_at for e in h.events("instrument.completed")] == [
        local("21:13"),
        local("09:30", days=15),
    ]
