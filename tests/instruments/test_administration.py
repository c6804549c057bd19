"""Administering an instrument, reply by reply (bot.instruments.administration): the next item
after an answer, a re-ask with the reason, abandonment after the re-asks or a silence, the
scored completion, all at once in one reply, the week's figures, and attach's problems."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.instruments.administration import Catalogue, attach, week
from bot.instruments.loader import load_instruments
from bot.interventions.language.loader import load_intervention
from bot.store.event_types.instruments import (
    InstrumentAbandoned,
    InstrumentAnswerRejected,
    InstrumentCompleted,
    InstrumentItemAnswered,
)

NOW = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)
SHIPPED = load_instruments()
CATALOGUE = Catalogue({"phq9": SHIPPED["phq9"], "gad7": SHIPPED["gad7"]})


def _asking(item: str | None = "i1", mode: str = "one-per-message", **more: object) -> dict:
    return {
        "administration_id": "a1",
        "instrument": "phq9",
        "number": 1,
        "mode": mode,
        "item": item,
        "started_at": NOW.isoformat(),
        "last_at": NOW.isoformat(),
        "abandon_minutes": 120,
        "answers": {},
        "skipped": [],
        "reasked": 0,
        **more,
    }


def test_an_answer_asks_the_next_item() -> None:
    found = CATALOGUE.read(_asking(), {}, "several days", NOW)
    assert found.events == [
        InstrumentItemAnswered(
            administration_id="a1", instrument="phq9", item="i1", value=1, next_item="i2"
        )
    ]
    assert found.reply is not None and found.reply.startswith("Feeling down, depressed")
    assert not found.completed


def test_an_unreadable_reply_is_asked_again_with_the_reason_then_abandoned() -> None:
    first = CATALOGUE.read(_asking(), {}, "7", NOW)
    assert isinstance(first.events[0], InstrumentAnswerRejected)
    assert first.reply is not None and first.reply.startswith("Sorry, I could not read that:")
    assert "Little interest" in first.reply

    last = CATALOGUE.read(_asking(reasked=1), {}, "7", NOW)
    assert [type(e) for e in last.events] == [InstrumentAnswerRejected, InstrumentAbandoned]
    assert last.events[1].reason == "reasks"  # type: ignore[attr-defined]


def test_the_last_item_completes_and_scores_the_administration() -> None:
    answers = {f"i{n}": 2 for n in range(1, 9)}
    found = CATALOGUE.read(_asking("i9", answers=answers), {"phq9": {"count": 2}}, "1", NOW)
    done = found.events[-1]
    assert isinstance(done, InstrumentCompleted) and found.completed
    assert (done.result["total"], done.result["band"], done.count) == (17, "moderately severe", 3)
    assert done.result["items"]["i9"] == 1 and done.result["count"] == 3


def test_silence_past_the_abandon_time_hands_the_message_to_the_step() -> None:
    found = CATALOGUE.read(_asking(), {}, "1", NOW + timedelta(minutes=121))
    assert found.reply is None
    assert [e.reason for e in found.events] == ["silence"]  # type: ignore[attr-defined]


def test_all_at_once_one_reply_answers_every_item_or_names_the_bad_ones() -> None:
    asking = _asking(None, "all-at-once")
    done = CATALOGUE.read(asking, {}, "1 2 1 0 3 0 0 1 2", NOW)
    assert done.completed and done.events[-1].result["total"] == 10  # type: ignore[attr-defined]
    bad = CATALOGUE.read(asking, {}, "1 2 1 0 7 0 0 1 2", NOW)
    assert bad.reply is not None and "answer 5 is '7'" in bad.reply


def test_the_week_counts_the_last_seven_days_only() -> None:
    totals = [[(NOW - timedelta(days=d)).isoformat(), t] for d, t in ((9, 10), (5, 2), (1, 6))]
    assert week(totals, NOW) == {"count": 2, "mean": 4.0, "min": 2, "max": 6}
    assert week([], NOW) == {"count": 0, "mean": None, "min": None, "max": None}


def test_data_has_every_name_before_the_first_administration() -> None:
    data = CATALOGUE.data({}, NOW)["phq9"]
    assert data["last"]["count"] == 0 and data["last"]["total"] is None
    assert data["last"]["items"]["i9"] is None and data["week"]["count"] == 0


def test_an_unknown_instrument_is_a_problem_at_its_line(tmp_path: Path) -> None:
    folder = tmp_path / "interventions" / "x"
    (folder / "steps").mkdir(parents=True)
    (folder / "intervention.yaml").write_text(
        "title: X\nversion: 1\nroot: hi\ninstruments:\n  - phq9\n  - phq10\n"
    )
    (folder / "steps" / "hi.md").write_text("---\ntitle: Hi\nsay: Hi\nend: true\n---\n")
    attached, problems = attach(load_intervention(folder))
    assert [(p.line, p.message.split(" in ")[0]) for p in problems] == [
        (6, "no instrument 'phq10'")
    ]
    assert attached.instruments is not None and attached.instruments.names() == ["phq9"]
