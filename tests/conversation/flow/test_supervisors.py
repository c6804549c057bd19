"""Supervisor alert texts: who, what they say, and the per-participant rate limit (pure)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.channel import outbound
from bot.conversation.supervisors import alert_body, alert_texts, short_code
from bot.store.event_types.alerts import AlertRaised
from bot.store.events import Event, new_id

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
BOSSES = ["+15005550100", "+15005550101"]


def alert(kind: str = "tool", severity: str = "warning", notify: bool = True) -> AlertRaised:
    return AlertRaised(
        alert_id=new_id(),
        kind=kind,
        severity=severity,
        summary=f"{kind} summary",
        notify_supervisors=notify,
    )


def texted(minutes_ago: float, severity: str | None = "warning") -> list[Event]:
    at = NOW - timedelta(minutes=minutes_ago)
    (message,) = outbound.to_address(
        BOSSES[0],
        "sms",
        "earlier alert",
        kind="alert",
        alert_severity=severity,  # type: ignore[arg-type]  # the test's names are valid
    )
    return [Event(1, new_id(), "participant:p1", 1, message, {}, None, at, at)]


def test_each_supervisor_gets_one_text_naming_the_participant_by_id() -> None:
    texts = alert_texts([alert()], "p1", BOSSES, [], NOW)

    assert [t.to_address for t in texts] == BOSSES
    assert {t.kind for t in texts} == {"alert"} and not any(t.to_participant for t in texts)
    assert texts[0].body.splitlines()[0] == "Tandem alert about participant p1:"


def test_the_most_severe_alert_comes_first_and_the_api_path_uses_the_public_url() -> None:
    tool, crisis = alert("tool"), alert("crisis", "critical")
    body = alert_body([tool, crisis], "p1", "https://t.example/")

    assert body.splitlines() == [
        "Tandem alert about participant p1:",
        "- crisis (critical): crisis summary",
        f"  Reply ACK {short_code(crisis.alert_id)} to take it on.",
        "- tool (warning): tool summary",
        f"  Reply ACK {short_code(tool.alert_id)} to take it on.",
        "Transcript: tandem events --participant p1",
        "API: GET https://t.example/conversation/participants/p1/messages",
    ]


def test_supervisors_texted_within_the_window_are_not_texted_again() -> None:
    window = timedelta(minutes=30)

    assert alert_texts([alert()], "p1", BOSSES, texted(29), NOW, window=window) == []
    assert len(alert_texts([alert()], "p1", BOSSES, texted(30), NOW, window=window)) == 2
    assert len(alert_texts([alert()], "p1", BOSSES, texted(1), NOW, window=timedelta(0))) == 2


def test_the_window_holds_back_only_alerts_no_more_severe_than_the_last_text() -> None:
    crisis = alert("crisis", "critical")

    assert len(alert_texts([crisis], "p1", BOSSES, texted(1), NOW)) == 2
    assert alert_texts([alert()], "p1", BOSSES, texted(1, "critical"), NOW) == []
    assert alert_texts([crisis], "p1", BOSSES, texted(1, "critical"), NOW) == []
    # a text recorded before severities were (none named) never holds back a warning
    assert len(alert_texts([alert()], "p1", BOSSES, texted(1, None), NOW)) == 2
    (first, *_) = alert_texts([crisis, alert()], "p1", BOSSES, [], NOW)
    assert first.alert_severity == "critical"


def test_alerts_that_do_not_ask_for_supervisors_text_nobody() -> None:
    assert alert_texts([alert(notify=False)], "p1", BOSSES, [], NOW) == []
    assert alert_texts([alert()], "p1", [], [], NOW) == []


def test_a_short_code_is_four_digits_and_the_same_for_the_same_alert() -> None:
    codes = {short_code(new_id()) for _ in range(50)}
    assert all(len(code) == 4 and code.isdigit() for code in codes)
    assert short_code("a") == short_code("a") != short_code("b")
