"""With an LLM configured but failing (the fake OpenAI server answering 503), the deployment
says so: GET /ready names the degraded states, the study page counts the failed turns and the
participant stuck on fallbacks, /metrics reports them, and an operator alert is raised and
texted once the state has lasted OPERATOR_ALERT_MINUTES — once per episode."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta

from bot.services import readiness
from bot.store.events import SYSTEM_STREAM
from tests.console.conftest import BASE_URL, PASSWORD, sign_in, staff_member
from tests.fakes.openai_api import ScriptedReply
from tests.scenarios.harness import Harness
from tests.web.conftest import TOKEN

DOWN = ScriptedReply.error(503, "overloaded")
OPERATOR = "+14165550177"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def failing(make_harness: Callable[..., Harness]) -> Harness:
    """A participant greeted while the LLM worked, then three messages while it is down."""
    h = make_harness(
        OPERATOR_PHONES=OPERATOR, OPERATOR_ALERT_MINUTES="15", TURN_RETRY_MINUTES="off"
    )
    h.script(ScriptedReply.text("Hi! What habit would you like to build?"))
    assert h.enroll(name="Ana").status_code == 201
    h.script(*[DOWN] * 3)
    for text in ("walking", "are you there?", "hello?"):
        h.text(text)
    assert len(h.data("turn.failed")) == 3
    return h


def test_ready_stays_ready_while_the_llm_answers(make_harness: Callable[..., Harness]) -> None:
    h = make_harness()
    h.script(ScriptedReply.text("Hi! What habit would you like to build?"))
    assert h.enroll(name="Ana").status_code == 201

    answer = h.client.get("/ready", headers=AUTH)

    assert answer.status_code == 200
    assert answer.get_json()["status"] == "ready"
    assert answer.get_json()["checks"]["llm_failing"]["degraded"] is False


def test_a_failing_llm_makes_ready_report_it_while_health_stays_live(
    make_harness: Callable[..., Harness],
) -> None:
    h = failing(make_harness)

    answer = h.client.get("/ready", headers=AUTH)
    public = h.client.get("/ready")

    assert answer.status_code == 503
    body = answer.get_json()
    assert body["status"] == "degraded"
    assert {"llm_failing", "turns_failing"} <= set(body["degraded"])
    assert body["checks"]["llm_failing"]["detail"].startswith("3 of the last 4 LLM calls failed")
    assert "checks" not in public.get_json() and public.get_json()["degraded"] == body["degraded"]
    assert h.client.get("/health").get_json()["status"] == "healthy"


def test_the_study_page_counts_failed_turns_and_the_participant_stuck_on_fallbacks(
    make_harness: Callable[..., Harness],
) -> None:
    h = failing(make_harness)
    staff_member(h.services, "researcher@example.org", "researcher")
    assert sign_in(h.client, "researcher@example.org", PASSWORD).status_code == 302

    page = h.client.get("/console/study", base_url=BASE_URL).get_data(as_text=True)

    assert re.search(r'id="failed-turns">3<', page)
    assert re.search(r'id="stuck-on-fallbacks">1<', page)
    assert 'data-state="llm_failing"' in page and 'data-state="turns_failing"' in page


def test_the_operator_alert_fires_after_the_set_minutes_once_per_episode(
    make_harness: Callable[..., Harness],
) -> None:
    h = failing(make_harness)

    def check() -> list[str]:
        done = readiness.check(h.store, h.settings, h.clock.now())
        h.settle()  # the dispatcher sends what was queued
        return [type(e).__name__ for e in done]

    assert "ReadinessDegraded" in check()
    h.clock.advance(timedelta(minutes=14))
    assert check() == []
    assert h.outbound(OPERATOR) == []
    h.clock.advance(timedelta(minutes=1))

    raised = check()

    assert raised.count("AlertRaised") == 2  # llm_failing and turns_failing
    texts = h.outbound(OPERATOR)
    assert len(texts) == 2 and all(t.startswith("Tandem operator alert: ") for t in texts)
    assert any("llm_failing for 15 minutes" in t for t in texts)
    alerts = [e.data for e in h.store.load(SYSTEM_STREAM) if e.event_type == "alert.raised"]
    assert {(a.kind, a.rule) for a in alerts} == {
        ("degraded", "llm_failing"),
        ("degraded", "turns_failing"),
    }
    h.clock.advance(timedelta(minutes=30))
    assert "AlertRaised" not in check()  # the same episode: not again
    assert len(h.outbound(OPERATOR)) == 2
    listed = h.client.get("/alerts", headers=AUTH).get_json()
    assert any(a["kind"] == "degraded" for a in listed["result"])


def test_an_episode_ends_when_the_state_clears_and_a_new_one_alerts_again(
    make_harness: Callable[..., Harness],
) -> None:
    h = failing(make_harness)
    readiness.check(h.store, h.settings, h.clock.now())
    h.clock.advance(timedelta(hours=2))  # the failed turns are older than an hour now
    h.script(*[ScriptedReply.text("Walking sounds good.")] * 10)
    for n in range(10):
        h.text(f"message {n}")

    ended = readiness.check(h.store, h.settings, h.clock.now())

    assert {e.state for e in ended if type(e).__name__ == "ReadinessRestored"} == {
        "llm_failing",
        "turns_failing",
    }
    assert h.client.get("/ready").status_code == 200


def test_metrics_need_a_token_and_report_the_failures(
    make_harness: Callable[..., Harness],
) -> None:
    h = failing(make_harness)

    assert h.client.get("/metrics").status_code == 401
    scraped = h.client.get("/metrics", headers=AUTH)

    text = scraped.get_data(as_text=True)
    assert scraped.status_code == 200 and scraped.mimetype == "text/plain"
    assert "tandem_turns_failed_last_hour 3.0" in text
    assert 'tandem_degraded{state="llm_failing"} 1.0' in text
    assert 'tandem_llm_calls_recorded{outcome="failed"} 3.0' in text
    assert 'tandem_llm_calls_total{outcome="failed"}' in text
    assert 'tandem_webhook_seconds_bucket{le="0.005",webhook="inbound"}' in text
    assert "tandem_turn_seconds_count" in text
