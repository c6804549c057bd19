"""Takeover: the bot waits while a staff member writes to the participant, then takes up again."""

from __future__ import annotations

import re
from collections.abc import Callable

from flask.testing import FlaskClient
from sqlalchemy import select

from bot.runtime.worker import Worker
from bot.store.event_types import ParticipantOptedOut
from bot.store.events import participant_stream
from bot.store.schema import outbox
from bot.store.services import Services
from tests.console.conftest import get, post
from tests.factories import enrolled, received
from tests.runtime.test_worker import echo, replies


def _participant(services: Services, **changes: object) -> str:
    data = enrolled(name="Ada", **{"timezone": "Europe/London", **changes})
    services.store.append(participant_stream(data.participant_id), [data], expected_version=0)
    Worker(services, echo, "w").run_once()  # the greeting: the bot has had its turn
    return data.participant_id


def _form_token(client: FlaskClient, pid: str) -> str:
    page = get(client, f"/console/participants/{pid}").get_data(as_text=True)
    return re.search(r'name="form_token" value="([^"]+)"', page).group(1)


def _staff_bodies(services: Services, pid: str) -> list[str]:
    with services.store.reading() as conn:
        rows = conn.execute(
            select(outbox.c.body)
            .where(outbox.c.participant_id == pid, outbox.c.kind == "staff")
            .order_by(outbox.c.position)
        )
        return [r.body for r in rows]


def test_while_taken_over_the_bot_waits_and_staff_messages_go_through_the_outbox(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    pid = _participant(services)
    client = signed_in("researcher")
    worker = Worker(services, echo, "w")

    assert (
        post(client, f"/console/participants/{pid}/takeover", {"reason": "alert"}).status_code
        == 302
    )
    services.store.append(participant_stream(pid), [received("SM9", "are you a person?")])
    assert worker.run_once() == 0  # the bot's turn waits, pending

    token = _form_token(client, pid)
    sent = post(
        client,
        f"/console/participants/{pid}/message",
        {"text": "Yes, I'm Sam.", "form_token": token},
    )
    again = post(
        client,
        f"/console/participants/{pid}/message",
        {"text": "Yes, I'm Sam.", "form_token": token},
    )
    assert sent.status_code == 302 and again.status_code == 302
    assert _staff_bodies(services, pid) == ["Yes, I'm Sam."]  # the form sent twice, queued once

    assert post(client, f"/console/participants/{pid}/handback").status_code == 302
    # Staff answered the waiting message: the bot does not take it as its turn's input.
    assert worker.run_once() == 0
    assert "You said: are you a person?" not in replies(services.store, pid)
    handled = [
        e.data
        for e in services.store.load(participant_stream(pid))
        if e.event_type == "message.handled"
    ]
    assert [(h.how, h.by) for h in handled] == [("answered", "staff:researcher@example.org")]
    by_type = {
        e.event_type: e.meta.get("actor")
        for e in services.store.load(participant_stream(pid))
        if e.event_type in ("takeover.started", "takeover.ended", "message.handled")
        or (e.event_type == "message.queued" and e.data.kind == "staff")
    }
    assert by_type == {
        "takeover.started": "staff:researcher@example.org",
        "message.queued": "staff:researcher@example.org",
        "takeover.ended": "staff:researcher@example.org",
        "message.handled": "staff:researcher@example.org",
    }


def test_taking_over_twice_or_handing_back_what_the_bot_holds_is_refused(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    pid = _participant(services)
    client = signed_in("researcher")

    back = post(client, f"/console/participants/{pid}/handback")
    post(client, f"/console/participants/{pid}/takeover")
    twice = post(client, f"/console/participants/{pid}/takeover")

    assert back.status_code == 409 and "nothing to hand back" in back.get_data(as_text=True)
    assert twice.status_code == 409
    assert "Already taken over by staff:researcher@example.org" in twice.get_data(as_text=True)
    started = [
        e
        for e in services.store.load(participant_stream(pid))
        if e.event_type == "takeover.started"
    ]
    assert len(started) == 1


def test_no_staff_message_is_queued_without_a_takeover_after_stop_or_in_quiet_hours(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    # 08:00 UTC is 03:00 in Toronto: inside the study's quiet hours (QUIET_HOURS=22:00-08:00).
    services.clock.set(services.clock.now().replace(hour=8, minute=0))
    quiet = _participant(services, phone="+14155552672", timezone="America/Toronto")
    stopped = _participant(services, phone="+14155552673")
    free = _participant(services, phone="+14155552674")
    services.store.append(participant_stream(stopped), [ParticipantOptedOut(source="keyword")])
    client = signed_in("researcher")
    for pid in (quiet, stopped):
        post(client, f"/console/participants/{pid}/takeover")

    def write(pid: str):  # noqa: ANN202
        token = _form_token(client, pid) if pid != free else "a-token-of-another-page"
        return post(
            client, f"/console/participants/{pid}/message", {"text": "hi", "form_token": token}
        )

    untaken, opted, night = write(free), write(stopped), write(quiet)

    assert untaken.status_code == 409 and "Take the conversation over" in untaken.get_data(
        as_text=True
    )
    assert opted.status_code == 409 and "opted out" in opted.get_data(as_text=True)
    assert night.status_code == 409 and "inside their quiet hours" in night.get_data(as_text=True)
    assert all(_staff_bodies(services, pid) == [] for pid in (quiet, stopped, free))
