"""The review band end to end, through the signed webhook: a message the learned line scores
between its review and alert thresholds raises a review item quoting it, sends the participant
only the normal reply, is counted by /ready and /metrics, escalates to a crisis alert texted to
the supervisor when nobody clears it — across a restart — and loses its quote with the
participant's erasure. One test uses the shipped model itself."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from bot.conversation.learned import read_card, shipped_line
from bot.conversation.safety import CrisisScreen
from bot.store.personal import ERASED
from tests.fakes.learned_line import TableLine
from tests.fakes.openai_api import ScriptedReply
from tests.scenarios.harness import SUPERVISOR, Harness
from tests.web.conftest import TOKEN

AUTH = {"Authorization": f"Bearer {TOKEN}"}
GREETING = "Hi! I'm your habit coach. What would you like to work on?"
MIDDLE = "gave my console to my cousin, won't need it after this week"
REPLY = "That's generous of you. How is the walking going?"
ENV = {
    "SUPERVISOR_PHONES": SUPERVISOR,
    "SAFETY_ALERT_THRESHOLD": "0.9",
    "SAFETY_REVIEW_THRESHOLD": "0.5",
    "REVIEW_ESCALATE_MINUTES": "60",
    "ALERT_ESCALATE_MINUTES": "15",
}
CORPUS = Path(__file__).resolve().parents[1] / "safety_corpus"


def reviewed(make_harness: Callable[..., Harness]) -> Harness:
    """A participant whose message the learned line (a table: 0.6) puts in the review band."""
    h = make_harness(learned=lambda: TableLine({MIDDLE: 0.6}), **ENV)
    h.script(ScriptedReply.text(GREETING))
    assert h.enroll(name="Ana").status_code == 201
    h.script(ScriptedReply.text(REPLY))
    h.text(MIDDLE)
    return h


def test_a_middle_band_message_raises_a_review_item_and_only_the_normal_reply(
    make_harness: Callable[..., Harness],
) -> None:
    h = reviewed(make_harness)

    assert h.outbound() == [GREETING, REPLY]  # no safety message, nothing else
    assert h.outbound(SUPERVISOR) == []  # a review item texts nobody
    (item,) = h.data("alert.raised")
    assert (item.kind, item.severity, item.quote) == ("review", "review", MIDDLE)
    (scored,) = h.data("safety.scored")
    assert (scored.band, scored.model_version) == ("review", "test-table-1")
    ready = h.client.get("/ready", headers=AUTH).get_json()
    assert ready["checks"]["reviews_unattended"] == {
        "degraded": False,
        "detail": "1 review items open, 0 of them for more than 65 minutes",
    }
    metrics = h.client.get("/metrics", headers=AUTH).get_data(as_text=True)
    assert "tandem_reviews_open 1.0" in metrics and "tandem_alerts_open 0.0" in metrics


def test_an_unreviewed_item_escalates_across_a_restart_and_texts_the_supervisor(
    make_harness: Callable[..., Harness],
) -> None:
    h = reviewed(make_harness)
    (item,) = h.data("alert.raised")
    h.advance(timedelta(minutes=59))
    assert h.outbound(SUPERVISOR) == [] and h.data("review.escalated") == []

    later = h.restart()  # a new worker and scheduler over the same database
    later.advance(timedelta(minutes=1))

    (escalated,) = later.data("review.escalated")
    assert (escalated.alert_id, escalated.via, escalated.minutes) == (item.alert_id, "timer", 60)
    (text,) = later.outbound(SUPERVISOR)
    assert "crisis (critical)" in text and MIDDLE not in text
    crisis = later.data("alert.raised")[-1]
    assert (crisis.alert_id, crisis.quote) == (escalated.crisis_alert_id, MIDDLE)
    assert later.outbound() == [GREETING, REPLY]  # still nothing automatic to the participant
    assert later.store.projection_row("alerts", item.alert_id)["status"] == "resolved"
    # the crisis alert escalates in its turn, as any crisis alert does
    later.advance(timedelta(minutes=15))
    assert later.outbound(SUPERVISOR)[-1].startswith("ESCALATED: not acknowledged within 15")


def test_unreviewed_past_its_escalation_makes_ready_degraded_when_no_worker_escalates_it(
    make_harness: Callable[..., Harness],
) -> None:
    h = reviewed(make_harness)
    h.clock.advance(timedelta(minutes=66))  # the clock moves on, nothing fires the timer

    body = h.client.get("/ready", headers=AUTH).get_json()

    assert "reviews_unattended" in body["degraded"]
    assert body["checks"]["reviews_unattended"]["detail"].startswith("1 review items open, 1 ")


def test_erasing_the_participant_erases_the_quote_of_their_review_items(
    make_harness: Callable[..., Harness],
) -> None:
    h = reviewed(make_harness)
    h.advance(timedelta(minutes=60))  # escalated: the crisis alert quotes the message too
    ids = [a.alert_id for a in h.data("alert.raised")]
    assert [
        h.client.get(f"/alerts/{i}", headers=AUTH).get_json()["result"]["quote"] for i in ids
    ] == [MIDDLE, MIDDLE]

    erase = {"confirm": h.pid, "reason": "asked", "requested_by": "participant"}
    assert h.api("POST", f"/participants/{h.pid}/erase", erase).status_code == 200

    for alert_id in ids:
        result = h.client.get(f"/alerts/{alert_id}", headers=AUTH).get_json()["result"]
        assert result["quote"] == ERASED and MIDDLE not in str(result)


def _in_the_shipped_review_band() -> str:
    """A corpus message (everyday ones first, then the held-out file's) the shipped model
    scores in its own review band and the phrase screen passes (chosen by the model as
    committed, so a retrained model picks its own)."""
    card, line, screen = read_card().thresholds, shipped_line(), CrisisScreen.from_default()
    lines = (CORPUS / "everyday.txt").read_text(encoding="utf-8").splitlines()
    heldout = (CORPUS / "heldout_v3.tsv").read_text(encoding="utf-8").splitlines()
    lines += [row.split("\t")[0] for row in heldout]
    for text in (t.strip() for t in lines if t.strip() and not t.startswith("#")):
        if card.review <= line.score(text).score < card.alert and not screen.check(text).crisis:
            return text
    pytest.fail("no corpus message falls in the shipped model's review band")


def test_the_shipped_model_raises_a_review_item_for_a_message_in_its_review_band(
    make_harness: Callable[..., Harness],
) -> None:
    text = _in_the_shipped_review_band()
    h = make_harness(SUPERVISOR_PHONES=SUPERVISOR)  # the default: on
    h.script(ScriptedReply.text(GREETING))
    assert h.enroll(name="Ana").status_code == 201
    h.script(ScriptedReply.text(REPLY))

    h.text(text)

    (scored,) = h.data("safety.scored")
    assert (scored.band, scored.model_version) == ("review", read_card().version)
    (item,) = h.data("alert.raised")
    assert (item.severity, item.quote) == ("review", text)
    assert h.outbound() == [GREETING, REPLY] and h.outbound(SUPERVISOR) == []
