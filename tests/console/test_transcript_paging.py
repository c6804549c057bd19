"""A participant's transcript paged back to its first message, and search over message text."""

from __future__ import annotations

import re
from collections.abc import Callable

from flask.testing import FlaskClient

from bot.store.event_types import MessageQueued
from bot.store.event_types.alerts import AlertRaised
from bot.store.events import participant_stream
from bot.store.services import Services
from tests.console.conftest import get
from tests.factories import enrolled, received


def _enroll(services: Services, phone: str, name: str) -> str:
    data = enrolled(phone=phone, name=name)
    services.store.append(participant_stream(data.participant_id), [data], expected_version=0)
    return data.participant_id


def _talk(services: Services, pid: str, phone: str, count: int, prefix: str = "msg") -> None:
    """`count` messages, alternating in and out, numbered from 1."""
    stream = participant_stream(pid)
    for i in range(1, count + 1):
        body = f"{prefix} {i:03d}"
        if i % 2:
            services.store.append(
                stream, [received(sid=f"SM{pid[:8]}{i:04d}", body=body, phone=phone)]
            )
        else:
            services.store.append(
                stream,
                [
                    MessageQueued(
                        outbox_id=f"o-{pid[:8]}-{i}", to_address=phone, channel="sms", body=body
                    )
                ],
            )


def _said(page: str) -> list[str]:
    return re.findall(r'<span class="said">(msg \d{3})</span>', page)


def _link(page: str, cls: str) -> str | None:
    found = re.search(rf'<a class="{cls}" href="([^"]+)"', page)
    return found.group(1).replace("&amp;", "&") if found else None


def test_a_300_message_transcript_pages_back_to_its_first_message_and_forward_again(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    pid = _enroll(services, "+14155552671", "Ada")
    _talk(services, pid, "+14155552671", 300)
    client = signed_in("researcher")

    newest = get(client, f"/console/participants/{pid}").get_data(as_text=True)
    assert _said(newest) == [f"msg {i:03d}" for i in range(201, 301)]
    assert 'hx-trigger="every 5s"' in newest and _link(newest, "newer") is None

    seen = _said(newest)
    page = newest
    while (older := _link(page, "older")) is not None:
        page = get(client, older).get_data(as_text=True)
        assert "hx-trigger" not in page  # a page read back holds still
        seen = _said(page) + seen
    assert seen == [f"msg {i:03d}" for i in range(1, 301)]
    assert 'class="first-message"' in page and _said(page)[0] == "msg 001"

    forward = get(client, _link(page, "newer") or "").get_data(as_text=True)
    assert _said(forward)[0] == f"msg {len(_said(page)) + 1:03d}"


def test_a_bad_page_cursor_is_a_400_saying_what_is_wrong(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    pid = _enroll(services, "+14155552671", "Ada")
    client = signed_in("researcher")

    response = get(client, f"/console/participants/{pid}/transcript?tbefore=abc")

    assert response.status_code == 400
    assert "tbefore must be a message number" in response.get_data(as_text=True)


def test_search_finds_a_message_across_participants_but_not_one_the_role_may_not_read(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    ada = _enroll(services, "+14155552671", "Ada")
    bo = _enroll(services, "+14155552672", "Bo")
    cy = _enroll(services, "+14155552673", "Cy")
    for pid, phone in ((ada, "+14155552671"), (bo, "+14155552672"), (cy, "+14155552673")):
        _talk(services, pid, phone, 30)
        services.store.append(
            participant_stream(pid),
            [received(sid=f"SMx{pid[:8]}", body="I feel Hopeless today", phone=phone)],
        )
    for pid in (ada, bo):
        services.store.append(
            participant_stream(pid),
            [AlertRaised(alert_id=f"a-{pid[:8]}", kind="crisis", summary="x")],
        )

    researcher = get(signed_in("researcher"), "/console/search?q=hopeless").get_data(as_text=True)
    supervisor_client = signed_in("supervisor")
    supervisor = get(supervisor_client, "/console/search?q=hopeless").get_data(as_text=True)
    one = get(signed_in("admin"), f"/console/search?q=hopeless&participant={bo}")

    def found(page: str) -> set[str]:
        return set(re.findall(r'class="match" data-participant="([^"]+)"', page))

    assert found(researcher) == {ada, bo, cy}
    assert found(supervisor) == {ada, bo}  # Cy has no alert for supervisors
    assert found(one.get_data(as_text=True)) == {bo}
    assert "I feel Hopeless today" in supervisor
    refused = get(supervisor_client, f"/console/search?q=hopeless&participant={cy}")
    assert refused.status_code == 403 and "Hopeless" not in refused.get_data(as_text=True)
    assert get(signed_in("statistician"), "/console/search?q=hopeless").status_code == 403


def test_a_search_link_opens_the_page_of_the_transcript_that_holds_the_message(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    pid = _enroll(services, "+14155552671", "Ada")
    _talk(services, pid, "+14155552671", 250)
    client = signed_in("researcher")

    results = get(client, "/console/search?q=msg 007").get_data(as_text=True)
    link = re.search(r'<p class="match"[^>]*>\s*<a href="([^"]+)"', results)
    assert link
    page = get(client, link.group(1).replace("&amp;", "&").split("#")[0]).get_data(as_text=True)

    assert _said(page) == [f"msg {i:03d}" for i in range(1, 8)]
