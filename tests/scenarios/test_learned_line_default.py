"""The learned crisis line as a default deployment runs it, through the signed webhook and the
worker, with no SAFETY_LEARNED set: the shipped model alerts on a crisis the phrase screen
misses, and the web app never loads it (the harness's handler loads it on its first message;
`tandem worker` loads it at start: tests/cli/test_worker_learned_line.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from bot.conversation.learned import LinearLine, read_card, shipped_line, verdict_band
from bot.conversation.safety import CrisisScreen
from bot.conversation.safety_eval import NONE, read_corpus
from tests.fakes.openai_api import ScriptedReply
from tests.scenarios.harness import BASE_ENV, SUPERVISOR, Harness

GREETING = "Hi! I'm your habit coach. What would you like to work on?"
REPLY = "Nice one. How is the walking going?"
HELDOUT_V3 = Path(__file__).resolve().parents[1] / "safety_corpus" / "heldout_v3.tsv"


def _only_the_learned_line_catches() -> str:
    """A crisis line of the retired held-out v3 the phrase screen passes and the shipped model
    alerts on (chosen by the model as committed, so a retrained model picks its own)."""
    alert, line = read_card().thresholds.alert, shipped_line()
    screen = CrisisScreen.from_default()
    corpus = read_corpus(HELDOUT_V3.read_text(encoding="utf-8").splitlines(), HELDOUT_V3.name)
    for item in corpus:
        if item.category == NONE or screen.check(item.text).crisis:
            continue
        if line.score(item.text).score >= alert:
            return item.text
    pytest.fail("the shipped model alerts on no v3 crisis line the phrase screen misses")


def started(make_harness: Callable[..., Harness], **kwargs: object) -> Harness:
    h = make_harness(SUPERVISOR_PHONES=SUPERVISOR, **kwargs)
    assert "SAFETY_LEARNED" not in {**BASE_ENV, **h.env}  # the default, not a test's choice
    assert h.settings.safety_learned
    h.script(ScriptedReply.text(GREETING))
    assert h.enroll(name="Ana").status_code == 201
    return h


def test_by_default_the_learned_line_alerts_on_a_crisis_the_phrase_screen_misses(
    make_harness: Callable[..., Harness],
) -> None:
    text = _only_the_learned_line_catches()
    h = started(make_harness)

    h.text(text)

    (screened,) = h.data("safety.screened")
    assert not screened.crisis
    (scored,) = h.data("safety.scored")
    assert (scored.band, scored.model_version) == ("alert", read_card().version)
    (alert,) = h.data("alert.raised")
    assert (alert.kind, alert.rule, alert.quote) == ("crisis", "learned", text)
    (texted,) = h.outbound(SUPERVISOR)
    assert "crisis" in texted and text not in texted
    assert len(h.outbound()) == 2  # the greeting, then the safety message


def test_the_web_app_never_loads_the_model_and_the_worker_loads_it_on_its_first_message(
    make_harness: Callable[..., Harness],
) -> None:
    loads: list[LinearLine] = []

    def load() -> LinearLine:
        loads.append(shipped_line())
        return loads[-1]

    h = started(make_harness, learned=load)
    assert loads == []  # enrolled, the welcome sent: nothing inbound yet
    h.deliver("did my walk after lunch, felt good")
    assert loads == []  # the webhook recorded and queued it: the web does not score

    h.script(ScriptedReply.text(REPLY))
    h.settle()
    h.script(ScriptedReply.text(REPLY))
    h.text("going again tomorrow")

    assert len(loads) == 1  # the handler's first message loaded it, once
    # each message's band as the shipped model and its card give it: the plain walk report is
    # never reviewed; the short second text is in the review band with the models since abc83c
    # (they read it as a plan: docs/safety.md), which a retrain may change
    texts = ["did my walk after lunch, felt good", "going again tomorrow"]
    bands = [verdict_band(shipped_line().score(t), read_card().thresholds) for t in texts]
    assert bands[0] == "none"
    assert [s.band for s in h.data("safety.scored")] == bands
    assert h.outbound() == [GREETING, REPLY, REPLY]
