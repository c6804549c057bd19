"""What applies to each intervention's participants, used by the flow: its crisis phrases and
safety message, its supervisors (texted as well as SUPERVISOR_PHONES), its quiet hours for the
scheduler; read once per process, and the server's settings when its intervention.yaml cannot be
read."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.core.config import DEFAULT_HELPLINE_TEXT, load_settings
from bot.core.localtime import QuietHours
from bot.interventions.interpreter.applied import AppliedByIntervention, quiet_hours_by_intervention
from bot.interventions.language.intervention import Intervention
from modules import MODULES
from modules.step import StepModule
from tests.conversation.flow.conftest import SUPERVISOR, Conversation
from tests.fakes.openai_api import ScriptedReply

STUDY_SUPERVISOR = "+15005550111"
FIT_MESSAGE = (
    "I'm an automated coach and I can't give you the support you deserve right now. "
    f"{DEFAULT_HELPLINE_TEXT} Your message has been flagged to the study team. "
    "We'll pause our exercise for now."
)


def study(root: Path, extra: str = "") -> Path:
    """An intervention `study` under `root` that starts in the intake module."""
    folder = root / "study"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "intervention.yaml").write_text(f"title: Study\nversion: 1\nmodule: intake\n{extra}")
    return folder


def texts_to(conversation: Conversation, phone: str) -> list[str | None]:
    return [m.body for m in conversation.queued("alert") if m.to_address == phone]


def test_a_participant_is_screened_with_their_interventions_phrases_and_its_safety_message(
    make_conversation: Callable[..., Conversation],
) -> None:
    conversation = make_conversation()
    conversation.enroll(intervention="fit-motivation")
    conversation.receive("I'll just stop eating altogether")

    conversation.run()

    alert = conversation.data("alert.raised")[0]
    assert (alert.kind, alert.rule) == ("crisis", "intervention.extra")
    assert conversation.bodies("notice") == [FIT_MESSAGE]
    assert len(texts_to(conversation, SUPERVISOR)) == 1
    assert conversation.fake.requests == []


def test_the_same_words_from_a_participant_of_another_intervention_go_to_the_llm(
    make_conversation: Callable[..., Conversation],
) -> None:
    conversation = make_conversation()
    conversation.enroll(intervention="habit-coach")
    conversation.receive("I'll just stop eating altogether")
    conversation.fake.script(ScriptedReply.text("Hi!"), ScriptedReply.text("Tell me more."))

    conversation.run()

    assert conversation.data("alert.raised") == []
    assert conversation.bodies() == ["Hi!", "Tell me more."]


def test_an_intervention_without_a_safety_message_gets_safety_message(
    make_conversation: Callable[..., Conversation],
) -> None:
    conversation = make_conversation(SAFETY_MESSAGE="Please call {helpline}", HELPLINE_TEXT="911")
    conversation.enroll(intervention="habit-coach")
    conversation.receive("I want to kill myself")

    conversation.run()

    assert conversation.bodies("notice") == ["Please call 911"]


def test_an_interventions_supervisors_are_texted_as_well_as_supervisor_phones(
    make_conversation: Callable[..., Conversation],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    study(tmp_path, f'supervisors: ["{STUDY_SUPERVISOR}", "{SUPERVISOR}"]\n')
    monkeypatch.setitem(MODULES, "step", StepModule(root=tmp_path))  # build_handler reads its root
    conversation = make_conversation()
    conversation.enroll(intervention="study")
    conversation.receive("I want to kill myself")

    conversation.run()

    assert len(texts_to(conversation, SUPERVISOR)) == 1  # once, though named twice
    assert len(texts_to(conversation, STUDY_SUPERVISOR)) == 1


def test_what_applies_to_each_intervention_is_built_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    study(tmp_path, "safety: {extra_phrases: [i deserve to suffer]}\n")
    built: list[str] = []
    screen = Intervention.crisis_screen
    monkeypatch.setattr(
        Intervention, "crisis_screen", lambda self: built.append(self.slug) or screen(self)
    )
    applied_by = AppliedByIntervention(load_settings({}, env_file=None), root=tmp_path)

    first = applied_by.of({"intervention": "study"})
    again = applied_by.of({"intervention": "study"})

    assert first is again and built == ["study"]
    assert first.screen.check("I deserve to suffer").crisis
    assert not applied_by.of({"intervention": "other"}).screen.check("I deserve to suffer").crisis


def test_an_intervention_whose_configuration_cannot_be_read_gets_the_servers(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    study(tmp_path, "supervisors: not-a-list-of-phones: [\n")
    applied_by = AppliedByIntervention(load_settings({}, env_file=None), root=tmp_path)

    with caplog.at_level(logging.ERROR):
        applied = applied_by.of({"intervention": "study"})

    assert applied is applied_by.default
    assert "intervention 'study'" in caplog.text and "the server's settings apply" in caplog.text


def test_only_interventions_with_quiet_hours_of_their_own_replace_quiet_hours() -> None:
    found = quiet_hours_by_intervention()

    assert sorted(found) == [
        "cbt-reframe",
        "ema-craving",
        "fit-motivation",
        "phq9-checkin",
        "walk-mrt",
    ]
    assert all(isinstance(hours, QuietHours) for hours in found.values())
