"""The simulation report's sections on progress and cost (bot.sandbox.sim_progress,
bot.sandbox.sim_costs), each counted from a hand-made run's events: time to completion, forms,
measurement adherence, LLM calls with their cost from a price table (validated at file:line),
and the slowest turns (bot.sandbox.sim_timing)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from bot.sandbox import sim_pages
from bot.sandbox.sim_costs import PricesError, llm, read_prices
from bot.sandbox.sim_progress import adherence, completion, forms
from bot.sandbox.sim_timing import TurnTime, timings
from bot.store.event_types.conversation import LLMCalled
from bot.store.event_types.forms import FormCompleted, FormExtracted, FormFailed
from bot.store.event_types.instruments import InstrumentAbandoned, InstrumentStarted
from bot.store.event_types.interventions import MeasurementRecorded, StepEntered
from bot.store.event_types.participants import ParticipantEnrolled
from bot.store.event_types.timers import MeasurementAsked, MeasurementMissed, TimerScheduled
from bot.store.events import Event, EventData, participant_stream

ROOT = Path(__file__).resolve().parents[2]
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def pid(n: int) -> str:
    return f"00000000-0000-4000-8000-{n:012d}"


def stream(n: int, *timed: tuple[float, EventData]) -> list[Event]:
    """Participant n's events, each `hours` after T0, after their enrollment at T0."""
    enrolled = ParticipantEnrolled(
        participant_id=pid(n), phone=f"+1555010{n:04d}", timezone="UTC", intervention="x"
    )
    found = []
    for i, (hours, data) in enumerate([(0.0, enrolled), *timed], 1):
        at = T0 + timedelta(hours=hours)
        found.append(Event(i, f"e{n}-{i}", participant_stream(pid(n)), i, data, {}, None, at, at))
    return found


def facts(names: list[str], events: list[list[Event]], **intervention: Any) -> Any:
    """What the sections read of a run: events by participant, personas, the intervention."""
    run = SimpleNamespace(
        names=names,
        start=T0,
        days=14,
        cohort=SimpleNamespace(participant_ids=list(map(pid, range(len(names))))),
    )
    declared = SimpleNamespace(
        steps=intervention.get("steps", {}), forms=intervention.get("forms", {})
    )
    return SimpleNamespace(run=run, events=events, intervention=declared, prices=None)


def entered(step: str) -> StepEntered:
    return StepEntered(intervention="x", step=step)


def test_time_to_completion_counts_who_reached_an_end_step_and_how_many_days_it_took() -> None:
    steps = {"welcome": SimpleNamespace(end=False), "goodbye": SimpleNamespace(end=True)}
    events = [
        stream(0, (1, entered("welcome")), (24, entered("goodbye"))),
        stream(1, (1, entered("welcome")), (72, entered("goodbye")), (80, entered("goodbye"))),
        stream(2, (1, entered("welcome"))),
        stream(3),
    ]
    found = completion(facts(["a", "a", "a", "b"], events, steps=steps))
    assert found["end_steps"] == ["goodbye"]
    assert found["overall"] == {
        "completed": 2,
        "not_finished": 2,
        "days": {"median": 3.0, "p90": 3.0, "max": 3.0},
    }
    assert found["by_persona"]["a"]["days"] == {"median": 3.0, "p90": 3.0, "max": 3.0}
    assert (found["by_persona"]["a"]["completed"], found["by_persona"]["a"]["not_finished"]) == (
        2,
        1,
    )
    assert found["by_persona"]["b"] == {
        "completed": 0,
        "not_finished": 1,
        "days": {"median": None, "p90": None, "max": None},
    }
    assert "End steps: goodbye." in "".join(sim_pages.completion(found))


def test_forms_started_completed_abandoned_and_minutes_to_complete() -> None:
    events = [
        stream(0, (1, FormExtracted(form="intake")), (1.5, FormCompleted(form="intake"))),
        stream(
            1, (2, FormFailed(form="intake", reason="no LLM")), (3, FormExtracted(form="intake"))
        ),
        stream(2),
    ]
    found = forms(facts(["a"] * 3, events, forms={"intake": object()}))
    assert found == {
        "intake": {
            "started": 2,
            "completed": 1,
            "abandoned": 1,
            "extractions": 2,
            "failed_extractions": 1,
            "rejected": 0,
            "minutes_to_complete": {"median": 30.0, "p90": 30.0, "max": 30.0},
        }
    }
    assert forms(facts(["a"], [stream(0)])) is None  # no form declared: no section


def asked(n: int, name: str = "mood") -> MeasurementAsked:
    return MeasurementAsked(measurement=name, timer_id=f"t{n}", outbox_id=f"o{n}", answer_by=T0)


def test_adherence_counts_questions_answered_of_asked_and_questionnaires_completed_of_sent() -> (
    None
):
    events = [
        stream(
            0, (1, asked(1)), (2, MeasurementRecorded(measurement="mood", value=3)), (3, asked(2))
        ),
        stream(
            1,
            (1, asked(3)),
            (5, MeasurementMissed(measurement="mood", timer_id="t3", outbox_id="o3")),
            (6, InstrumentStarted(administration_id="a1", instrument="phq9")),
            (
                9,
                InstrumentAbandoned(
                    administration_id="a1", instrument="phq9", started_at=T0, reason="silence"
                ),
            ),
        ),
    ]
    found = adherence(facts(["keen", "quiet"], events))
    assert found is not None
    assert found["questions"] == {
        "mood": {"sent": 3, "answered": 1, "missed": 1, "rejected": 0, "adherence": 0.333}
    }
    assert found["instruments"] == {
        "phq9": {"sent": 1, "answered": 0, "abandoned": 1, "adherence": 0.0}
    }
    assert found["by_persona"] == {
        "keen": {"sent": 2, "answered": 1, "adherence": 0.5},
        "quiet": {"sent": 2, "answered": 0, "adherence": 0.0},
    }
    assert adherence(facts(["a"], [stream(0)])) is None


def called(model: str, purpose: str, tokens: tuple[int, int] | None, ms: float = 10) -> LLMCalled:
    if tokens is None:
        return LLMCalled(call_id="c", purpose=purpose, model=model, ok=False, error="down")
    return LLMCalled(
        call_id="c",
        purpose=purpose,
        model=model,
        prompt_tokens=tokens[0],
        completion_tokens=tokens[1],
        latency_ms=ms,
    )


def prices_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "prices.yaml"
    path.write_text(text)
    return path


def test_llm_calls_are_costed_from_the_price_table_and_an_unpriced_model_is_never_zero(
    tmp_path: Path,
) -> None:
    events = [
        stream(
            0,
            (1, called("small", "step:a:reply", (1_000_000, 500_000))),
            (2, called("small", "judgement:ready", (200_000, 0))),
            (3, called("big", "step:a:reply", (10, 20))),
            (4, called("small", "step:a:reply", None)),
        )
    ]
    seen = facts(["a"], events)
    seen.prices = read_prices(
        prices_file(
            tmp_path, "currency: EUR\nper_million_tokens:\n  small: {input: 1, output: 4}\n"
        )
    )
    found = llm(seen)
    assert (found["calls"], found["failed"]) == (4, 1)
    assert (found["tokens_in"], found["tokens_out"]) == (1_200_010, 500_020)
    assert found["by_model"]["small"]["cost"] == 1.2 + 2.0
    assert found["by_model"]["big"] == {
        "calls": 1,
        "failed": 0,
        "tokens_in": 10,
        "tokens_out": 20,
        "cost": None,
        "priced": False,
    }
    assert found["unpriced_models"] == ["big"] and found["cost"] == 3.2
    assert found["currency"] == "EUR"
    reply = [
        r for r in found["by_purpose"] if r["purpose"] == "step:a:reply" and r["model"] == "small"
    ]
    assert reply == [
        {"purpose": "step:a:reply", "model": "small", "calls": 2, "failed": 1}
        | {"tokens_in": 1_000_000, "tokens_out": 500_000}
    ]
    page = "".join(sim_pages.llm(found))
    assert "<strong>No declared price</strong>: big (10 in, 20 out)" in page
    seen.prices = None  # without --prices nothing is costed
    bare = llm(seen)
    assert bare["cost"] is None and bare["unpriced_models"] == ["big", "small"]
    assert llm(facts(["a"], [stream(0)])) == {"calls": 0, "note": "no LLM calls"}
    assert "No LLM calls." in "".join(sim_pages.llm({"calls": 0, "note": "no LLM calls"}))


def test_the_shipped_example_price_table_is_valid() -> None:
    table = read_prices(ROOT / "docs" / "prices.example.yaml")
    assert table.currency == "USD" and "gpt-4o-mini" in table.per_million_tokens
    assert not (ROOT / "personas" / "prices.example.yaml").exists()


def test_a_bad_price_table_is_refused_at_file_and_line(tmp_path: Path) -> None:
    path = prices_file(
        tmp_path,
        "currency: USD\nper_million_tokens:\n  a: {input: 1, output: 2}\n"
        "  b: {input: -1, output: 2}\n  c: {input: 1}\ncolour: red\n",
    )
    with pytest.raises(PricesError) as caught:
        read_prices(path)
    said = sorted(str(p) for p in caught.value.problems)
    assert any(s.startswith(f"{path}:4:") and "input" in s for s in said), said
    assert any(s.startswith(f"{path}:5:") and "output" in s for s in said), said
    assert any(s.startswith(f"{path}:6:") and "colour" in s for s in said), said
    with pytest.raises(PricesError) as empty:
        read_prices(prices_file(tmp_path, "currency: USD\nper_million_tokens: {}\n"))
    assert "per_million_tokens" in str(empty.value.problems[0])


def test_the_slowest_turns_come_from_the_turns_timed_with_who_and_what() -> None:
    events = [
        stream(
            0,
            (1, TimerScheduled(timer_id="t9", kind="measurement", due_at=T0)),
            (2, entered("rating")),
        ),
        stream(1, (0.5, called("m", "p", (1, 1), ms=250.0))),
    ]
    turns = [
        TurnTime(pid(0), "timer", "t9", T0 + timedelta(hours=3), 0.5),
        TurnTime(pid(1), "inbound", "e", T0 + timedelta(hours=1), 0.02),
    ] + [TurnTime(pid(1), "inbound", "e", T0, 0.001)] * 12
    found = timings(facts(["a", "b"], events), turns)
    assert found["turns"]["count"] == 14 and found["turns"]["max_ms"] == 500.0
    assert len(found["slowest"]) == 10
    assert found["slowest"][0] == {
        "participant": 0,
        "persona": "a",
        "turn": "timer measurement",
        "step": "rating",
        "at": (T0 + timedelta(hours=3)).isoformat(),
        "ms": 500.0,
    }
    assert found["slowest"][1]["persona"] == "b" and found["slowest"][1]["ms"] == 20.0
    assert found["llm_latency_ms"] == {"calls": 1, "median": 250.0, "p90": 250.0, "max": 250.0}
    assert "Slowest turns" in "".join(sim_pages.slowest(found))
