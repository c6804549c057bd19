"""Property: whatever the model answers, the form state its events leave in the participants
row (kept inline, turn by turn) is what a replay of the participant's events rebuilds, and so
is the clock computed from it; `tandem replay --check` compares the `forms` column."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import update

from bot.interventions.interpreter import extraction
from bot.interventions.interpreter.completion import Asker
from bot.interventions.interpreter.forms import clock, fields
from bot.interventions.language.loader import load_intervention
from bot.store.event_store import EventStore
from bot.store.events import participant_stream
from bot.store.projections.participant_forms import state
from bot.store.replay import compare, rebuild
from bot.store.schema import participants
from tests.factories import enrolled, received

INTAKE = load_intervention(Path(__file__).resolve().parents[2] / "interventions" / "health-intake")
FORM = INTAKE.forms["intake"]
KEYS = [*FORM.fields, "shift_work", "pets", "bogus"]
DOMAINS = [*FORM.domains, "nowhere"]
TYPES = ["text", "int", "number", "bool", "choice", "list", "date", "time"]

value = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 130),
    st.floats(0, 30, allow_nan=False),
    st.sampled_from(["good", "poor", "never", "current", "nurse", "2026-03-02", "09:00"]),
    st.lists(st.sampled_from(["asthma", "diabetes"]), max_size=2),
)
proposal = st.fixed_dictionaries(
    {
        "key": st.sampled_from(["shift_work", "pets", "Bad Key", "age"]),
        "domain": st.sampled_from([*DOMAINS, None]),
        "type": st.sampled_from(TYPES),
        "options": st.one_of(st.none(), st.lists(st.sampled_from(["a", "b", "c"]), max_size=3)),
        "description": st.sampled_from(["", "Works shifts."]),
        "why": st.just("it matters"),
    }
)
reply = st.fixed_dictionaries(
    {
        "analysis": st.just("read"),
        "values": st.one_of(
            st.none(),
            st.lists(
                st.fixed_dictionaries({"key": st.sampled_from(KEYS), "value": value}), max_size=5
            ),
        ),
        "new_fields": st.one_of(st.none(), st.lists(proposal, max_size=2)),
        "domain": st.sampled_from([*DOMAINS, None]),
        "domains_complete": st.one_of(st.none(), st.lists(st.sampled_from(DOMAINS), max_size=3)),
        "form_complete": st.one_of(st.none(), st.booleans()),
        "next": st.none(),
    }
)
PHONES = (f"+1415555{n:04d}" for n in itertools.count(1000))  # one participant per example
turns = st.lists(st.tuples(reply, st.sampled_from(["collect", "passive"])), min_size=1, max_size=6)


def _asker(answer: dict[str, Any]) -> Asker:
    def structured(messages: Any, model_cls: Any, purpose: str, *, model: Any = None) -> Any:
        return model_cls.model_validate(answer), []

    return Asker(converse=None, structured=structured)  # type: ignore[arg-type]


def _context() -> dict[str, Any]:
    return {"turns": lambda n=None, step=None: "PERSON: hello"}


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(script=turns)
def test_replaying_the_events_rebuilds_the_same_form_state_and_clock(
    store: EventStore, script: list[tuple[dict[str, Any], str]]
) -> None:
    first = enrolled(phone=next(PHONES), intervention="health-intake")
    pid = first.participant_id
    stream = participant_stream(pid)
    store.append(stream, [first])
    for number, (answer, mode) in enumerate(script):
        store.append(stream, [received(sid=f"SM{number:04d}", phone=first.phone)])
        inbound = store.load(stream)[-1]
        row = store.projection_row("participants", pid)
        assert row is not None
        found = extraction.extract(
            INTAKE, "intake", mode, _context(), _asker(answer), row, inbound, "interview"
        )
        store.append(stream, found)
        row = store.projection_row("participants", pid)
        completed = extraction.completion(INTAKE, "intake", row or {})
        if completed:
            store.append(stream, completed)

    report = rebuild(store)
    compare(store, report)

    assert report.unreadable == [] and report.differences == []
    kept = store.projection_row("participants", pid)
    rebuilt = report.rebuilt["participants"][pid]
    assert kept is not None and kept["forms"] == rebuilt["forms"]
    assert clock(FORM, state(kept, "intake")) == clock(FORM, state(rebuilt, "intake"))
    values = state(kept, "intake")["values"]
    assert "bogus" not in values and "Bad Key" not in values  # rejected, never stored
    stream_events = store.load(stream)
    last = {e.data.key: e.data.value for e in stream_events if e.event_type == "form.value_set"}
    assert values == last
    extracted = [e.data for e in stream_events if e.event_type == "form.extracted"]
    figures = clock(FORM, state(kept, "intake"))
    assert figures["turns"] == sum(e.mode == "collect" for e in extracted)
    assert figures["known"] == sum(v is not None for v in values.values())


def test_replay_check_reports_a_tampered_form_state(store: EventStore) -> None:
    first = enrolled(phone=next(PHONES), intervention="health-intake")
    stream = participant_stream(first.participant_id)
    store.append(stream, [first, received(phone=first.phone)])
    inbound = store.load(stream)[-1]
    row = store.projection_row("participants", first.participant_id)
    answer = {"analysis": "x", "values": [{"key": "age", "value": 40}]}
    found = extraction.extract(
        INTAKE, "intake", "collect", _context(), _asker(answer), row or {}, inbound, "interview"
    )
    store.append(stream, found)
    with store.engine.begin() as conn:
        conn.execute(update(participants).values(forms={"intake": {"values": {"age": 99}}}))

    report = rebuild(store)
    compare(store, report)

    assert [set(d.columns) for d in report.differences] == [{"forms"}]
    assert report.rebuilt["participants"][first.participant_id]["forms"]["intake"]["values"] == {
        "age": 40
    }


def test_added_fields_come_in_one_order_whatever_order_the_stored_state_keeps_them_in() -> None:
    """PostgreSQL's jsonb gives an object's keys back in its own order (shorter keys first), so
    a state read back can hold `added` in another order than the fold that made it: the clock
    and the field list must not follow it."""
    spec = {"type": "text", "domain": None, "options": [], "description": "", "why": "-"}
    folded = {"added": {"shift_work": spec, "pets": spec}}
    read_back = {"added": {"pets": spec, "shift_work": spec}}
    assert clock(FORM, folded) == clock(FORM, read_back)
    assert list(fields(FORM, folded)) == list(fields(FORM, read_back))
    assert list(fields(FORM, folded))[-2:] == ["pets", "shift_work"]
