"""The chat sandbox driven directly: greeting, fixed wording with no LLM call, timers fired by
/wait, /jump, /state, /events, /notes, /reset and unknown commands."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.conversation import timer_turns
from bot.conversation.llm import ChatClient
from bot.core.config import load_settings
from bot.sandbox.no_llm import NoLLM
from bot.sandbox.session import NO_LLM_NOTICE, Sandbox, SandboxError, locate
from bot.sandbox.views import parse_duration
from bot.store.event_types.conversation import ProfileSaved, StateTransitioned
from bot.store.event_types.forms import FormExtracted, FormValueSet
from bot.store.event_types.interventions import JudgementRecorded, NoteTaken
from bot.store.events import Event
from bot.timers.schedules import create_daily
from modules.step import INTERVENTIONS
from tests.fakes.openai_api import FakeOpenAI, ScriptedReply

PRACTICE = Path(__file__).resolve().parent / "fixtures" / "practice"
START = datetime(2026, 3, 2, 14, 0, tzinfo=UTC)  # 09:00 in Toronto
GREETING = "Hi Ana! This is a practice run. Ready?"
FALLBACK = "Sorry, that did not work on our side. We'll be in touch."


@pytest.fixture
def make(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Sandbox]]:
    """Sandboxes on the practice fixture, in Toronto, from Monday 09:00; closed afterwards."""
    # build_handler adds one
    monkeypatch.setattr(timer_turns, "HANDLERS", dict(timer_turns.HANDLERS))
    made: list[Sandbox] = []

    def build(env: dict[str, str] | None = None, **options: object) -> Sandbox:
        # Scripted in FIFO order; the second-line classifier is covered in tests/conversation.
        settings = load_settings({"SAFETY_CLASSIFIER": "off", **(env or {})}, env_file=None)
        options = {"intervention": str(PRACTICE), "timezone": "America/Toronto", **options}
        sandbox = Sandbox(settings, name="Ana", start=START, **options)  # type: ignore[arg-type]
        made.append(sandbox)
        return sandbox

    yield build
    for sandbox in made:
        sandbox.close()


@pytest.fixture
def sandbox(make: Callable[..., Sandbox]) -> Sandbox:
    built = make()
    assert built.start() == [GREETING]
    return built


def events(sandbox: Sandbox, event_type: str) -> list[Event]:
    return [e for e in sandbox.store.load(sandbox.stream) if e.event_type == event_type]


def test_the_participant_is_greeted_by_the_root_step(make: Callable[..., Sandbox]) -> None:
    sandbox = make()

    assert sandbox.start() == [GREETING]
    assert sandbox.row()["current_step"] == "welcome"
    assert isinstance(sandbox.llm, NoLLM) and sandbox.llm.calls == 0
    assert "step.entered: - → welcome (root)" in sandbox.take_remarks()


def test_fixed_wording_is_answered_without_any_request_to_the_llm(
    make: Callable[..., Sandbox],
) -> None:
    with FakeOpenAI() as fake:
        sandbox = make({"OPENAI_BASE_URL": fake.url + "/v1"})
        assert isinstance(sandbox.llm, ChatClient)  # the real client, pointed at the fake

        replies = [sandbox.start(), sandbox.say("yes"), sandbox.say("I walked")]
        sandbox.command("/wait 1d")

        assert replies == [
            [GREETING],
            ["Tell me one small thing you did today."],
            ["Thanks! Tell me one more."],
        ]
        assert fake.requests == []


def test_the_shipped_demo_runs_in_fixed_wording_with_no_request_to_the_llm(
    make: Callable[..., Sandbox],
) -> None:
    with FakeOpenAI() as fake:
        sandbox = make({"OPENAI_BASE_URL": fake.url + "/v1"}, intervention="demo")
        greeting = sandbox.start()
        for line in ("1", "ok", "ok", "/wait", "1", "ok"):
            sandbox.handle(line)

        assert greeting and all(greeting)
        assert events(sandbox, "turn.failed") == []
        assert events(sandbox, "measurement.recorded") != []
        assert fake.requests == []


def test_an_llm_step_asks_the_configured_llm(make: Callable[..., Sandbox]) -> None:
    with FakeOpenAI() as fake:
        sandbox = make({"OPENAI_BASE_URL": fake.url + "/v1", "TANDEM_MODEL": "fake-model"})
        sandbox.start()
        sandbox.command("/jump coach")
        fake.script(ScriptedReply.text("Well done for starting!"))

        assert sandbox.say("hello") == ["Well done for starting!"]
        assert len(fake.requests) == 1


def test_a_message_is_recorded_as_the_webhook_records_it(sandbox: Sandbox) -> None:
    assert sandbox.say("STOP") == []

    received = events(sandbox, "message.received")[-1].data
    assert (received.body, received.keyword, received.from_address) == ("STOP", "STOP", "+15550100")
    assert received.message_sid.startswith("SM")
    assert sandbox.row()["opted_out"] is True


def test_wait_fires_a_timer_at_its_due_time(sandbox: Sandbox) -> None:
    sandbox.say("yes")  # entering "practice" sets a nudge for 2 h later

    output = sandbox.command("/wait 2h")

    assert output.splitlines()[0] == "(waited 2h: it is Mon 02 Mar 11:00 local time)"
    assert "bot> A nudge from the practice step." in output
    assert events(sandbox, "timer.fired")[-1].data.late_seconds == 0


def test_a_long_wait_fires_each_timer_on_the_way_instead_of_missing_it(sandbox: Sandbox) -> None:
    sandbox.say("yes")

    output = sandbox.command("/wait 1d")

    assert "bot> A nudge from the practice step." in output
    assert "bot> How is your mood, from 1 (low) to 5 (good)?" in output
    assert events(sandbox, "timer.skipped") == []


def test_a_daily_schedule_created_through_events_sends_its_prompt_after_a_wait(
    sandbox: Sandbox,
) -> None:
    created = create_daily(
        sandbox.row(), "21:00", "daily", {"text": "Time for today's step"}, START
    )
    sandbox.store.append(sandbox.stream, created)

    output = sandbox.command("/wait 13h")

    assert "bot> Time for today's step" in output
    assert sandbox.clock.now() == START + timedelta(hours=13)


def test_wait_alone_goes_to_the_next_timer(sandbox: Sandbox) -> None:
    output = sandbox.command("/wait")

    assert output.splitlines()[0] == "(waited 11h: it is Mon 02 Mar 20:00 local time)"
    assert output.endswith("bot> How is your mood, from 1 (low) to 5 (good)?")
    assert sandbox.say("4") == ["Thanks, noted."]


@pytest.mark.parametrize(
    ("text", "seconds"), [("30s", 30), ("15m", 900), ("2h", 7200), ("1d", 86400), ("1h30m", 5400)]
)
def test_wait_durations_are_read_in_days_hours_minutes_and_seconds(text: str, seconds: int) -> None:
    assert parse_duration(text).total_seconds() == seconds


def test_a_duration_wait_cannot_read_is_explained(sandbox: Sandbox) -> None:
    output = sandbox.command("/wait 2 hours")

    assert output == "error: '2 hours' is not a duration: write 30s, 15m, 2h, 1d or 1h30m"


def test_jump_moves_the_participant_to_a_step_that_takes_the_next_message(
    sandbox: Sandbox,
) -> None:
    output = sandbox.command("/jump goodbye")

    assert output.startswith("moved to step goodbye (Goodbye)")
    entered = events(sandbox, "step.entered")[-1]
    assert (entered.data.from_step, entered.data.step) == ("welcome", "goodbye")
    assert entered.meta["actor"] == "chat"
    assert sandbox.say("hi") == ["Thank you for practising. Goodbye!"]


def test_jump_from_another_module_moves_the_conversation_into_the_steps(
    sandbox: Sandbox,
) -> None:
    moved = StateTransitioned(from_state="step", to_state="feedback", source="operator")
    sandbox.store.append(sandbox.stream, [moved])

    sandbox.command("/jump practice")

    back = events(sandbox, "state.transitioned")[-1].data
    assert (back.from_state, back.to_state, back.source) == ("feedback", "step", "operator")
    assert sandbox.row()["conversation_state"] == "step"
    assert sandbox.say("hello") == ["Tell me one small thing you did today."]


def test_jump_to_an_unknown_step_names_the_steps_there_are(sandbox: Sandbox) -> None:
    assert sandbox.command("/jump nowhere") == (
        "error: no step 'nowhere' in practice; its steps: coach, goodbye, practice, welcome"
    )
    assert sandbox.row()["current_step"] == "welcome"


def test_an_intervention_that_cannot_be_used_is_refused_before_anything_runs(
    make: Callable[..., Sandbox],
) -> None:
    with pytest.raises(SandboxError) as refused:
        make(intervention="no-such-intervention")

    assert str(refused.value).startswith("intervention 'no-such-intervention' cannot be used:")
    assert "no-such-intervention: no such intervention; known: " in str(refused.value)


def test_an_llm_step_without_an_llm_sends_the_fallback_and_says_so_once(sandbox: Sandbox) -> None:
    assert isinstance(sandbox.llm, NoLLM)
    sandbox.command("/jump coach")
    first = sandbox.transcript(sandbox.say("hello"))
    sandbox.command("/jump coach")
    second = sandbox.transcript(sandbox.say("hello again"))

    assert first.endswith(f"bot> {FALLBACK}") and second.endswith(f"bot> {FALLBACK}")
    assert NO_LLM_NOTICE in first and NO_LLM_NOTICE not in second
    assert sandbox.llm.calls == 2


def test_state_shows_where_the_participant_is_and_what_is_pending(sandbox: Sandbox) -> None:
    sandbox.say("yes")
    judged = JudgementRecorded(judgement="ready", result={"reason": "keen", "answer": "yes"})
    sandbox.store.append(sandbox.stream, [judged, ProfileSaved(changes={"started": True})])

    lines = sandbox.command("/state").splitlines()

    assert lines[1].startswith("intervention practice (Sandbox practice, revision 1+")
    assert lines[2] == "state        step"
    assert lines[3].startswith("step         practice (Practice) · turn 0 of this visit")
    assert lines[4] == "counters     visits: welcome 1, practice 1 · turns in all: 1"
    assert lines[5:7] == [
        "profile      started=True",
        "judgements   ready: reason=keen, answer=yes",
    ]
    assert "timers       send Mon 02 Mar 11:00 (in 2h) · measurement Mon 02 Mar 20:00 (in 11h)" in (
        lines
    )


def test_events_lists_the_last_events_one_line_each(sandbox: Sandbox) -> None:
    sandbox.say("yes")

    lines = sandbox.command("/events 3").splitlines()

    assert len(lines) == 3
    assert [line.split()[5] for line in lines] == [
        "message.queued",
        "work.completed",
        "message.sent",
    ]
    assert lines[0].endswith('reply: "Tell me one small thing you did today."')
    assert sandbox.command("/events many") == "error: /events takes a number of events, not 'many'"


def test_notes_shows_each_note_taken(sandbox: Sandbox) -> None:
    assert sandbox.command("/notes") == "(no notes taken yet)"

    sandbox.store.append(sandbox.stream, [NoteTaken(note="summary", values={"SUMMARY": "Walks."})])

    assert sandbox.command("/notes") == "notes.SUMMARY: Walks."


def test_reset_starts_again_with_a_fresh_participant_and_database(sandbox: Sandbox) -> None:
    sandbox.say("yes")
    sandbox.command("/wait 2h")
    before, old_folder = sandbox.participant_id, sandbox.folder

    output = sandbox.command("/reset")

    assert output.endswith(f"bot> {GREETING}")
    assert sandbox.participant_id != before and not old_folder.exists()
    assert sandbox.clock.now() == START
    assert [e.event_type for e in sandbox.store.load(sandbox.stream)][0] == "participant.enrolled"
    assert sandbox.row()["current_step"] == "welcome"


def test_an_unknown_command_lists_the_commands(sandbox: Sandbox) -> None:
    output = sandbox.command("/frobnicate now")

    assert output.splitlines()[:2] == ["unknown command /frobnicate", "commands:"]
    assert all(name in output for name in ("/state", "/events", "/notes", "/jump", "/wait"))


def test_a_doubled_slash_sends_the_text_as_a_message(sandbox: Sandbox) -> None:
    sandbox.handle("//help")

    assert events(sandbox, "message.received")[-1].data.body == "/help"


def test_debug_traces_are_marked(make: Callable[..., Sandbox]) -> None:
    sent = make(debug=True).start()

    assert sent[0] == GREETING
    assert sent[1].startswith("[debug] ")


def test_an_intervention_is_named_by_slug_or_by_folder() -> None:
    assert locate("demo") == (INTERVENTIONS, "demo")
    assert locate(str(PRACTICE)) == (PRACTICE.parent, "practice")
    with pytest.raises(SandboxError, match="no intervention.yaml there"):
        locate(str(PRACTICE / "steps"))


def test_state_shows_each_form_with_its_values_and_clock(make: Callable[..., Sandbox]) -> None:
    sandbox = make(intervention=str(INTERVENTIONS / "ot-mentor"))
    sandbox.start()
    sandbox.store.append(
        sandbox.stream,
        [
            FormExtracted(form="situation", step="intake"),
            FormValueSet(form="situation", key="patient_age", value=72, type="int"),
        ],
    )

    lines = sandbox.command("/state").splitlines()

    at = lines.index("form situation patient_age=72")
    assert lines[at + 1 : at + 3] == [
        "             Turns: 1 so far.",
        "             Fields known: 1 of 18 (critical: 1 of 5).",
    ]


def test_a_retrieval_is_remarked_with_the_documents_it_found(make: Callable[..., Sandbox]) -> None:
    library = Path(__file__).resolve().parents[1] / "interventions" / "fixtures" / "library"
    sandbox = make(intervention=str(library))
    sandbox.start()
    sandbox.take_remarks()

    replies = sandbox.say("a stroke at home")

    remarks = sandbox.take_remarks()
    assert replies[0].startswith("This resembles: Stroke rehabilitation at home")
    assert any(
        "retrieved.scenarios from scenarios (bm25): s-stroke (" in line and "s-hip (" in line
        for line in remarks
    ), remarks
    assert any("retrieved.tip from tips (bm25): no match" in line for line in remarks), remarks


def test_the_default_setup_runs_the_demo_with_no_llm_and_the_classifier_left_as_configured() -> (
    None
):
    """The default settings (SAFETY_CLASSIFIER unset, no LLM): the sandbox must still start, its
    classifier off because no LLM is there, and the demo answers in fixed wording."""
    settings = load_settings({}, env_file=None)
    sandbox = Sandbox(settings, name="Ana", start=START, intervention="demo")
    try:
        greeting = sandbox.start()
        assert greeting and "Tandem demo" in greeting[0]
        assert sandbox.say("2")
        assert isinstance(sandbox.llm, NoLLM) and sandbox.llm.calls == 0
    finally:
        sandbox.close()
