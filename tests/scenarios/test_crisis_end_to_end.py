"""Crisis detection end to end, through the signed Twilio webhook, with both lines on: every
category in every language reaches every supervisor (no phone number, no message text) with no
module LLM call; the second line catches what the phrase list misses; a classifier that fails
leaves the turn to the screen alone."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.conversation.safety import CrisisScreen
from bot.conversation.safety_eval import NONE, Labelled, read_corpus
from tests.fakes.openai_api import RecordedChat, ScriptedReply
from tests.scenarios.harness import PHONE, Harness

HELDOUT = Path(__file__).resolve().parents[1] / "safety_corpus" / "heldout.txt"
SUPERVISORS = ("+14165550199", "+14165550188")
GREETING = "Hi! I'm your habit coach. What would you like to work on?"
NO_CRISIS = {"category": "none", "severity": "none", "reason": "Ordinary small talk."}
SCREEN = CrisisScreen.from_default()


def first_caught_per_cell() -> list[Labelled]:
    """For each category and language of the held-out corpus, its first line the screen flags
    (a cell with none caught fails here: the corpus test gives the rates)."""
    corpus = read_corpus(HELDOUT.read_text(encoding="utf-8").splitlines(), HELDOUT.name)
    cells: dict[tuple[str, str], Labelled | None] = {}
    for item in corpus:
        if item.category == NONE:
            continue
        cells.setdefault((item.category, item.language), None)
        if cells[(item.category, item.language)] is None and SCREEN.check(item.text).crisis:
            cells[(item.category, item.language)] = item
    missing = [cell for cell, item in cells.items() if item is None]
    assert not missing, f"no held-out line caught in {missing}"
    return [item for item in cells.values() if item is not None]


CELLS = first_caught_per_cell()


def started(make_harness: Callable[..., Harness], **env: str) -> Harness:
    settings = {"SUPERVISOR_PHONES": ",".join(SUPERVISORS), "SAFETY_CLASSIFIER": "auto", **env}
    h = make_harness(**settings)
    h.script(ScriptedReply.text(GREETING))
    assert h.enroll(name="Ana").status_code == 201
    assert h.outbound() == [GREETING]
    return h


def is_classifier(request: RecordedChat) -> bool:
    schema = (request.body.get("response_format") or {}).get("json_schema") or {}
    return schema.get("name") == "SafetyVerdict"


def assert_alerted_without_details(h: Harness, body: str) -> None:
    for supervisor in SUPERVISORS:
        (text,) = h.outbound(supervisor)
        assert text.startswith(f"Tandem alert about participant {h.pid}:")
        assert PHONE not in text and PHONE[2:] not in text
        assert not re.search(r"\+\d{7,}", text)
        assert body not in text


def test_every_category_and_language_of_the_corpus_is_covered() -> None:
    assert {(i.category, i.language) for i in CELLS} == {
        (category, language)
        for category in ("suicide", "self_harm", "harm_to_others", "overdose", "abuse")
        for language in ("en", "es", "fr", "pt")
    }


@pytest.mark.parametrize("item", CELLS, ids=lambda i: f"{i.category}-{i.language}")
def test_crisis_language_alerts_every_supervisor_before_any_module_llm_call(
    make_harness: Callable[..., Harness], item: Labelled
) -> None:
    h = started(make_harness)
    calls = len(h.requests)
    h.script(ScriptedReply.structured(NO_CRISIS))  # the second line disagrees: one line suffices

    h.text(item.text)

    assert_alerted_without_details(h, item.text)
    (safety,) = h.outbound()[1:]
    assert "Your message has been flagged to the study team." in safety
    # The one LLM request after the message is the classifier's: no module turn ran.
    (request,) = h.requests[calls:]
    assert is_classifier(request)
    assert request.messages[-1] == {"role": "user", "content": item.text}
    (screened,) = h.data("safety.screened")
    assert (screened.crisis, screened.category) == (True, SCREEN.check(item.text).category)
    (classified,) = h.data("safety.classified")
    assert classified.verdict == "none"
    (alert,) = h.data("alert.raised")
    assert (alert.kind, alert.rule) == ("crisis", screened.rule)
    assert h.llm.pending == 0


def test_the_second_line_catches_a_message_the_phrase_list_misses(
    make_harness: Callable[..., Harness],
) -> None:
    body = "my stepfather touched me and told me not to tell"  # a held-out miss of the screen
    assert not SCREEN.check(body).crisis
    h = started(make_harness)
    calls = len(h.requests)
    h.script(
        ScriptedReply.structured(
            {"category": "abuse", "severity": "high", "reason": "Describes sexual abuse."}
        )
    )

    h.text(body)

    assert_alerted_without_details(h, body)
    (request,) = h.requests[calls:]
    assert is_classifier(request)
    (screened,) = h.data("safety.screened")
    assert screened.crisis is False
    (classified,) = h.data("safety.classified")
    assert (classified.verdict, classified.category, classified.severity) == (
        "crisis",
        "abuse",
        "high",
    )
    (alert,) = h.data("alert.raised")
    assert (alert.kind, alert.rule, alert.severity) == ("crisis", "classifier", "critical")
    assert "second-line LLM classifier" in alert.summary and body not in alert.summary
    assert "flagged to the study team" in h.outbound()[-1]


@pytest.mark.parametrize(
    ("verdict", "error"),
    [
        (ScriptedReply.text("I cannot classify that."), "not a valid SafetyVerdict"),
        (
            ScriptedReply.structured({"category": "none", "severity": "high", "reason": "x"}),
            "severity is none exactly when category is none",
        ),
        (ScriptedReply.error(500, "down"), "HTTP 500"),
        (ScriptedReply.hang(3), "timed out"),
    ],
    ids=["not-json", "incoherent", "http-500", "timeout"],
)
def test_a_classifier_failure_is_no_verdict_and_the_module_still_answers(
    make_harness: Callable[..., Harness], verdict: ScriptedReply, error: str
) -> None:
    h = started(make_harness, SAFETY_CLASSIFIER_TIMEOUT_SECONDS=verdict.client_timeout)
    h.script(verdict, ScriptedReply.text("Walking is a great habit to start with."))

    h.text("I want to walk more")

    assert h.outbound()[1:] == ["Walking is a great habit to start with."]
    (classified,) = h.data("safety.classified")
    assert classified.verdict == "no_verdict" and error in (classified.error or "")
    assert h.data("alert.raised") == []
    assert h.outbound(SUPERVISORS[0]) == []


def test_a_classifier_failure_leaves_crisis_language_to_the_screen(
    make_harness: Callable[..., Harness],
) -> None:
    h = started(make_harness)
    h.script(ScriptedReply.error(503, "overloaded"))

    h.text("I want to kill myself")

    (classified,) = h.data("safety.classified")
    assert classified.verdict == "no_verdict"
    (alert,) = h.data("alert.raised")
    assert alert.rule is not None and alert.rule != "classifier"
    assert_alerted_without_details(h, "I want to kill myself")


def test_with_the_classifier_off_no_call_is_made_and_no_verdict_is_recorded(
    make_harness: Callable[..., Harness],
) -> None:
    h = started(make_harness, SAFETY_CLASSIFIER="off")
    calls = len(h.requests)

    h.text("I want to kill myself")

    assert h.requests[calls:] == []
    assert h.data("safety.classified") == []
    # The phrase screen's verdict is recorded because the learned line (on by default) ran too.
    assert [s.rule for s in h.data("safety.screened")] == ["en.suicide.direct"]
    assert len(h.data("alert.raised")) == 1
