"""The participants table and a participant's page, read through the console."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from flask.testing import FlaskClient

from bot import console
from bot.store.event_types import MessageQueued
from bot.store.event_types.alerts import AlertRaised
from bot.store.event_types.interventions import StepEntered
from bot.store.event_types.timers import TimerScheduled
from bot.store.events import participant_stream
from bot.store.services import Services
from tests.console.conftest import get
from tests.factories import enrolled, received


def _enroll(services: Services, phone: str, name: str, **changes: object) -> str:
    data = enrolled(phone=phone, name=name, **changes)
    services.store.append(participant_stream(data.participant_id), [data], expected_version=0)
    return data.participant_id


def _names_in(page: str, names: list[str]) -> list[str]:
    """The names that appear on the page, in the order they appear."""
    return [n for _, n in sorted((page.index(n), n) for n in names if n in page)]


def test_the_table_searches_filters_sorts_and_pages(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    names = [f"Person {i:02d}" for i in range(30)]
    ids = [_enroll(services, f"+1415555{2600 + i:04d}", name) for i, name in enumerate(names)]
    services.store.append(
        participant_stream(ids[3]),
        [AlertRaised(alert_id="a-3", kind="crisis", summary="crisis words")],
    )
    client = signed_in("researcher")

    by_name = get(client, "/console/participants?sort=name&dir=asc&per=25").get_data(as_text=True)
    second = get(client, "/console/participants?sort=name&dir=asc&per=25&page=2")
    searched = get(client, "/console/participants?q=2607").get_data(as_text=True)
    alerted = get(client, "/console/participants?alert=open").get_data(as_text=True)

    assert _names_in(by_name, names) == names[:25]
    assert _names_in(second.get_data(as_text=True), names) == names[25:]
    assert "page 2 of 2" in second.get_data(as_text=True)
    assert _names_in(searched, names) == ["Person 07"]
    assert _names_in(alerted, names) == ["Person 03"] and "1 open" in alerted


def test_a_bad_filter_is_named_on_the_page_not_ignored(
    signed_in: Callable[[str], FlaskClient],
) -> None:
    client = signed_in("researcher")

    response = get(client, "/console/participants?status=sleeping&page=zero")

    assert response.status_code == 400
    page = response.get_data(as_text=True)
    assert "unknown status &#39;sleeping&#39;" in page and "page must be a whole number" in page


def test_the_participant_page_shows_the_conversation_the_step_timers_and_alerts(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    pid = _enroll(services, "+14155552671", "Ada", timezone="Europe/London")
    stream = participant_stream(pid)
    services.store.append(stream, [received(body="I walked today")])
    services.store.append(
        stream,
        [
            StepEntered(intervention="demo", step="tip", from_step="welcome"),
            MessageQueued(outbox_id="o-1", to_address="+14155552671", channel="sms", body="Nice!"),
            TimerScheduled(
                timer_id="t-1",
                kind="reminder",
                due_at=services.clock.now().replace(hour=18, minute=0),
                scope="test",
            ),
            AlertRaised(alert_id="a-1", kind="crisis", summary="crisis words"),
        ],
    )
    client = signed_in("researcher")

    page = get(client, f"/console/participants/{pid}").get_data(as_text=True)

    assert page.index("I walked today") < page.index("Nice!")
    assert 'class="bubble in"' in page and 'class="bubble out"' in page
    assert "local ·" in page and "UTC" in page
    assert 'id="current-step">tip<' in page
    assert "style s_tip fill:#ffd54f" in page  # the step highlighted on the Mermaid graph
    assert "reminder" in page and "crisis words" in page
    assert "step.entered" in page and "message.received" in page
    only_messages = get(client, f"/console/participants/{pid}?family=message")
    assert "step.entered" not in only_messages.get_data(as_text=True).split('id="timeline"')[1]


def test_the_transcript_fragment_polled_for_live_updates_shows_a_new_message(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    pid = _enroll(services, "+14155552671", "Ada")
    client = signed_in("researcher")
    before = get(client, f"/console/participants/{pid}/transcript").get_data(as_text=True)

    services.store.append(participant_stream(pid), [received(body="just now")])

    after = get(client, f"/console/participants/{pid}/transcript").get_data(as_text=True)
    assert "just now" not in before and "just now" in after
    assert 'hx-trigger="every 5s"' in after


def test_a_supervisor_reads_an_alerted_participant_but_not_the_others(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    alerted = _enroll(services, "+14155552671", "Ada")
    quiet = _enroll(services, "+14155552672", "Bo")
    services.store.append(
        participant_stream(alerted), [AlertRaised(alert_id="a-1", kind="crisis", summary="x")]
    )
    client = signed_in("supervisor")

    assert get(client, f"/console/participants/{alerted}").status_code == 200
    assert get(client, f"/console/participants/{quiet}").status_code == 403
    assert get(client, f"/console/participants/{quiet}/transcript").status_code == 403


def test_a_bubble_keeps_only_the_message_s_own_line_breaks(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    """Only the message text is shown with pre-wrap: the template's indentation never is."""
    pid = _enroll(services, "+14155552671", "Ada")
    services.store.append(participant_stream(pid), [received(body="first line\nsecond line")])
    client = signed_in("researcher")

    fragment = get(client, f"/console/participants/{pid}/transcript").get_data(as_text=True)

    assert '<span class="said">first line\nsecond line</span>' in fragment
    css = (Path(console.__file__).parent / "static" / "console.css").read_text()
    bubble_rule = re.search(r"\.bubble \{([^}]*)\}", css)
    assert bubble_rule and "pre-wrap" not in bubble_rule.group(1)
    assert re.search(r"\.bubble \.said \{[^}]*pre-wrap", css)


def test_the_timeline_says_what_happened_and_shows_the_data_on_demand(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    pid = _enroll(services, "+14155552671", "Ada")
    services.store.append(
        participant_stream(pid),
        [
            received(body="it's fine"),
            StepEntered(intervention="demo", step="tip", from_step="welcome"),
            AlertRaised(alert_id="a-1", kind="crisis", summary="crisis words"),
        ],
    )
    client = signed_in("researcher")

    page = get(client, f"/console/participants/{pid}").get_data(as_text=True)
    timeline = page.split('id="timeline"')[1]

    for line in ("message received", "step entered: tip", "alert raised: crisis"):
        assert f"<summary>{line}</summary>" in timeline
    assert "\\u0027" not in timeline and "it&#39;s fine" in timeline  # the data, as written
    assert "<details>" in timeline and "&#34;step&#34;: &#34;tip&#34;" in timeline


def test_a_supervisor_does_not_see_a_participant_with_only_an_operational_alert(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    failed = _enroll(services, "+14155552673", "Cy")
    services.store.append(
        participant_stream(failed),
        [AlertRaised(alert_id="a-9", kind="turn_failed", summary="the turn failed")],
    )
    client = signed_in("supervisor")

    assert get(client, f"/console/participants/{failed}").status_code == 403
    assert get(client, f"/console/participants/{failed}/transcript").status_code == 403
    assert get(signed_in("researcher"), f"/console/participants/{failed}").status_code == 200
