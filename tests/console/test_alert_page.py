"""The console's alert page quotes the message that raised the alert (erased with the
participant) and says who was texted and when, or plainly that nobody could be; the nav counts
open alerts."""

from __future__ import annotations

import re
from collections.abc import Callable

from flask.testing import FlaskClient

from bot.services import erasure
from bot.store.event_types.alerts import AlertRaised
from bot.store.event_types.messages import MessageFailed, MessageQueued, MessageSent
from bot.store.events import new_id, participant_stream
from bot.store.personal import ERASED
from bot.store.services import Services
from tests.console.conftest import get, post
from tests.factories import enrolled, received

WORDS = "gave my console to my cousin, won't need it"


def test_the_alert_page_quotes_the_message_until_the_participant_is_erased(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    data = enrolled(name="Ada")
    pid = data.participant_id
    alert = AlertRaised(alert_id="a-1", kind="crisis", summary="flagged", quote=WORDS)
    services.store.append(participant_stream(pid), [data, alert], expected_version=0)
    client = signed_in("supervisor")
    assert "/console/alerts/a-1" in get(client, "/console/alerts").get_data(as_text=True)

    page = get(client, "/console/alerts/a-1").get_data(as_text=True)
    assert "won&#39;t need it" in page or "won't need it" in page

    store = services.store
    erasure.erase(store, pid, confirm=pid, reason="asked", requested_by="participant", actor="t")
    after = get(client, "/console/alerts/a-1").get_data(as_text=True)
    assert ERASED in after and "need it" not in after
    assert get(client, "/console/alerts/nope").status_code == 404
    assert get(client, "/console/alerts/%00").status_code == 404  # never a 500 (PostgreSQL)


def _alert(services: Services, alert_id: str, *texts: MessageQueued) -> str:
    data = enrolled(f"+1415555{1000 + len(alert_id) * 7 + int(alert_id[-1]):04d}")
    alert = AlertRaised(alert_id=alert_id, kind="crisis", summary="s", notify_supervisors=True)
    pid = data.participant_id
    services.store.append(participant_stream(pid), [data, alert, *texts], expected_version=0)
    return pid


def _text(to: str) -> MessageQueued:
    return MessageQueued(
        outbox_id=new_id(),
        to_address=to,
        channel="sms",
        kind="alert",
        body="b",
        to_participant=False,
        alert_severity="critical",
    )


def test_the_nav_counts_open_alerts_and_the_page_says_who_was_texted(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    sent, failed = _text("+14165550199"), _text("+14165550188")
    pid = _alert(services, "a-2", sent, failed)
    services.store.append(
        participant_stream(pid),
        [
            MessageSent(outbox_id=sent.outbox_id, provider_sid="SM1"),
            MessageFailed(outbox_id=failed.outbox_id, error_message="unreachable"),
        ],
    )
    _alert(services, "a-3")
    client = signed_in("supervisor")

    nav = get(client, "/console/alerts").get_data(as_text=True)
    assert re.search(r'id="open-alerts-count"[^>]*>2<', nav)
    page = get(client, "/console/alerts/a-2").get_data(as_text=True)
    assert re.search(r"\+14165550199: queued [^<]*sent", page)
    assert re.search(r"\+14165550188: queued [^<]*failed", page)
    assert 'id="none-reached"' not in page
    nobody = get(client, "/console/alerts/a-3").get_data(as_text=True)
    assert "Nobody was texted about this alert" in nobody and "SUPERVISOR_PHONES" in nobody


def test_the_page_says_plainly_when_every_send_failed(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    failed = _text("+14165550188")
    pid = _alert(services, "a-4", failed)
    services.store.append(
        participant_stream(pid), [MessageFailed(outbox_id=failed.outbox_id, error_message="x")]
    )
    page = get(signed_in("supervisor"), "/console/alerts/a-4").get_data(as_text=True)
    assert "No text reached a supervisor: every send failed." in page


def test_a_supervisor_texts_the_participant_from_the_alert_and_hands_back(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    services.clock.set(services.clock.now().replace(hour=14, minute=0))  # outside quiet hours
    pid = _alert(services, "a-5")
    services.store.append(
        participant_stream(pid), [AlertRaised(alert_id="op-1", kind="turn_failed", summary="f")]
    )
    client = signed_in("supervisor")
    assert 'id="contact"' in get(client, "/console/alerts/a-5").get_data(as_text=True)

    sent = post(
        client, "/console/alerts/a-5/message", {"text": "Are you safe?", "form_token": "t1"}
    )

    assert sent.status_code == 302, sent.get_data(as_text=True)
    types = [e.event_type for e in services.store.load(participant_stream(pid))]
    assert "takeover.started" in types
    (staff,) = [
        e.data
        for e in services.store.load(participant_stream(pid))
        if isinstance(e.data, MessageQueued) and e.data.kind == "staff"
    ]
    assert staff.body == "Are you safe?"
    page = get(client, "/console/alerts/a-5").get_data(as_text=True)
    assert "supervisor@example.org holds the conversation" in page
    assert post(client, "/console/alerts/a-5/handback").status_code == 302
    last = services.store.load(participant_stream(pid))[-1]
    assert last.event_type == "takeover.ended"
    assert post(client, "/console/alerts/op-1/message", {"text": "x"}).status_code == 403


def test_handing_back_from_the_alert_asks_about_the_waiting_reply(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    services.clock.set(services.clock.now().replace(hour=14, minute=0))  # outside quiet hours
    pid = _alert(services, "a-6")
    client = signed_in("supervisor")
    post(client, "/console/alerts/a-6/message", {"text": "Are you safe?", "form_token": "t2"})
    services.store.append(participant_stream(pid), [received("SM61", "yes, thanks")])

    page = get(client, "/console/alerts/a-6").get_data(as_text=True)
    bare = post(client, "/console/alerts/a-6/handback")
    assert 'id="hand-back-handled"' in page and 'id="waiting-messages"' in page
    assert bare.status_code == 409 and "waits unanswered" in bare.get_data(as_text=True)
    assert services.store.projection_row("takeovers", pid)["status"] == "active"

    done = post(client, "/console/alerts/a-6/handback", {"waiting": "handled"})
    assert done.status_code == 302
    ended = [
        e.data
        for e in services.store.load(participant_stream(pid))
        if e.event_type == "takeover.ended"
    ]
    assert [(x.waiting, x.by) for x in ended] == [("handled", "staff:supervisor@example.org")]
    odd = post(client, "/console/alerts/a-6/handback", {"waiting": "later"})
    assert odd.status_code == 400 and "Unknown choice" in odd.get_data(as_text=True)
