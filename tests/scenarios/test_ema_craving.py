"""The shipped smoking-cessation EMA on the real engine with no LLM, through the signed webhook
over three weeks of a shifted clock: three craving prompts a day at random times inside the
waking-hour windows, each rating read by number and recorded and followed by "have you
smoked?", coaching after two ratings of 7 or more in a row, a relapse step with a warning to
the study team after a yes, and a weekly summary, rendered when it is sent, that quotes the
participant's own numbers of that week."""

from __future__ import annotations

import csv
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from bot.reporting.export import export
from tests.scenarios.harness import TORONTO, Harness, local

RATINGS = [3, 8, 5, 2, 6, 4, 7, 8, 9, 5, 5, 2, 3, 4, 6, 8, 2, 1, 0, 3, 7]  # week 1's 21 prompts
COACHED = 7  # the 7 then 8 in a row: coaching (the 9 after it starts a new count)
SLIP = 12  # the answer to "have you smoked?" after this rating is yes
NOTED = "Thanks, noted. Well done for staying smoke-free."


def _next_prompt(h: Harness) -> None:
    """Move the clock to the next pending craving prompt and let it go out."""
    pending = h.timers(kind="instrument", status="scheduled")
    due = min(t["due_at"] for t in pending)
    h.until(due)


def test_three_prompts_a_day_and_a_weekly_summary_of_the_participants_numbers(
    make_harness: Callable[..., Harness], tmp_path: Path
) -> None:
    h = make_harness(INTERVENTION="ema-craving", QUIET_HOURS="22:00-08:00")
    h.enroll(name="Kim")
    assert h.outbound()[0].startswith("Hi Kim! From tomorrow, for three weeks")

    for n, rating in enumerate(RATINGS):  # every prompt of the first week answered at once
        _next_prompt(h)
        assert "Reply 0 (No craving at all) to 10" in h.outbound()[-1]
        h.text(str(rating))
        reply, question = h.outbound()[-2:]
        if n == COACHED:
            assert reply.startswith("Thanks: 8 out of 10. That is two strong cravings in a row.")
        else:
            assert reply.startswith(f"Thanks: {rating} out of 10, noted.")
        assert question.startswith("Have you smoked since the last check-in?")
        h.text("yes" if n == SLIP else "no")
        if n == SLIP:
            assert h.outbound()[-1].startswith("Thank you for telling me. A slip is common")
            assert h.participant()["current_step"] == "relapse"
        else:
            assert h.outbound()[-1] == NOTED
    h.until(local("23:00", days=21))  # the next two weeks go unanswered

    entered = [e.data.step for e in h.events("step.entered")]
    assert entered.count("coaching") == 1 and entered.count("relapse") == 1
    assert entered.index("coaching") == 1 + COACHED  # welcome, then one step per rating
    [alert] = h.data("alert.raised")
    assert alert.severity == "warning" and "reports smoking" in alert.summary
    smoked = [m.value for m in h.data("measurement.recorded") if m.measurement == "smoked"]
    assert smoked == [n == SLIP for n in range(len(RATINGS))]

    started = [e.occurred_at.astimezone(TORONTO) for e in h.events("instrument.started")]
    by_day: dict[int, list[int]] = {}
    for at in started:
        by_day.setdefault((at.date() - local("08:00").date()).days, []).append(at.hour)
    assert sorted(by_day) == list(range(1, 22))  # from the day after enrollment, 21 days
    for hours in by_day.values():  # one in each window, every day
        assert len(hours) == 3
        assert 8 <= hours[0] < 12 and 12 <= hours[1] < 16 and 16 <= hours[2] < 21

    summaries = [m for m in h.outbound() if m.startswith("Your week in numbers")]
    mean = round(sum(RATINGS) / len(RATINGS), 2)
    assert summaries[0] == (
        f"Your week in numbers: you answered 21 check-ins in the last 7 days, with an average "
        f"craving of {mean} out of 10 (lowest 0, highest 9). Keep going!"
    )
    assert (
        summaries[1:]
        == ["Your week in numbers: you answered 0 check-ins in the last 7 days. Keep going!"] * 2
    )
    sent = [e for e in h.events("message.queued") if "Your week" in str(e.data.body)]
    assert [e.occurred_at.astimezone(TORONTO).hour for e in sent] == [21, 21, 21]

    export(h.store, tmp_path / "out", "csv")
    with (tmp_path / "out" / "instruments.csv").open(encoding="utf-8", newline="") as file:
        rows = list(csv.DictReader(file))
    completed = [r for r in rows if r["status"] == "completed"]
    assert [int(r["total"]) for r in completed] == RATINGS
    # each unanswered prompt is abandoned by its timer after 30 minutes of silence, or sooner
    # when the next prompt's random time comes first (the draws are random per enrollment)
    assert sum(r["status"] == "abandoned" for r in rows) == 3 * 14
    abandoned = h.events("instrument.abandoned")
    assert sum(e.data.reason == "silence" for e in abandoned) >= 3 * 14 - 14
    for event in abandoned:
        waited = event.occurred_at - event.data.started_at
        if event.data.reason == "silence":
            assert waited == timedelta(minutes=30)
        else:
            assert (event.data.reason, waited < timedelta(minutes=30)) == ("superseded", True)
    assert not h.requests
