"""The inbox of messages that need a human, over plain HTTP: what it lists, marking handled
(recorded with who and when), the nav's count, paging, and who sees what."""

from __future__ import annotations

import re
from collections.abc import Callable

from flask.testing import FlaskClient

from bot.services import takeover
from bot.store.event_types import ParticipantOptedOut
from bot.store.event_types.alerts import AlertRaised
from bot.store.events import SYSTEM_STREAM, participant_stream
from bot.store.services import Services
from tests.console.conftest import get, post
from tests.factories import enrolled, received


def _participant(services: Services, phone: str, **changes: object) -> str:
    data = enrolled(phone=phone, name="Ada", **changes)
    services.store.append(participant_stream(data.participant_id), [data], expected_version=0)
    return data.participant_id


def _ids(page: str) -> list[str]:
    return re.findall(r'id="message-([^"]+)"', page)


def _seed(services: Services) -> dict[str, str]:
    """One message of each kind needing a human, and one that does not; their event ids."""
    store = services.store
    active = _participant(services, "+14155552671")
    stopped = _participant(services, "+14155552672")
    held = _participant(services, "+14155552673")
    ids = {}
    store.append(participant_stream(active), [received("SM1", "an ordinary reply")])
    store.append(participant_stream(stopped), [received("SM2", "before stopping")])
    store.append(participant_stream(stopped), [ParticipantOptedOut(source="keyword")])
    ids["opted_out"] = (
        store.append(participant_stream(stopped), [received("SM3", "wait, can I rejoin?")])
        .events[0]
        .event_id
    )
    ids["unknown"] = (
        store.append(SYSTEM_STREAM, [received("SM4", "who is this?", phone="+14155550199")])
        .events[0]
        .event_id
    )
    takeover.take_over(store, held, actor="staff:r@example.org")
    ids["takeover"] = (
        store.append(participant_stream(held), [received("SM5", "are you a person?")])
        .events[0]
        .event_id
    )
    ids["held"] = held
    return ids


def test_the_inbox_lists_what_needs_a_human_newest_first_and_marks_handled(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    ids = _seed(services)
    client = signed_in("researcher")

    page = get(client, "/console/inbox").get_data(as_text=True)
    assert _ids(page) == [ids["takeover"], ids["unknown"], ids["opted_out"]]
    assert "wait, can I rejoin?" in page and "who is this?" in page
    assert "unknown sender" in page and "an ordinary reply" not in page
    assert "before stopping" not in page  # sent before the participant opted out
    assert re.search(r'id="inbox-count"[^>]*>3<', page)
    study = get(client, "/console/study").get_data(as_text=True)
    assert re.search(r'id="needing-human"><a href="/console/inbox">3<', study)

    done = post(client, f"/console/inbox/{ids['unknown']}/handled")
    again = post(client, f"/console/inbox/{ids['unknown']}/handled")
    assert done.status_code == 302 and again.status_code == 404
    after = get(client, "/console/inbox").get_data(as_text=True)
    assert _ids(after) == [ids["takeover"], ids["opted_out"]]
    assert re.search(r'id="inbox-count"[^>]*>2<', after)
    study = get(client, "/console/study").get_data(as_text=True)
    assert re.search(r'id="needing-human"><a href="/console/inbox">2<', study)
    handled = [e for e in services.store.load(SYSTEM_STREAM) if e.event_type == "message.handled"]
    assert len(handled) == 1
    assert handled[0].data.message_id == ids["unknown"]
    assert handled[0].data.by == "staff:researcher@example.org"
    assert handled[0].meta["actor"] == "staff:researcher@example.org"

    # A message marked handled during the takeover is no longer waiting: the hand-back needs
    # no choice and the bot never takes it as its turn's input.
    post(client, f"/console/inbox/{ids['takeover']}/handled")
    assert takeover.waiting_now(services.store, ids["held"]).unanswered == []
    work = services.store.projection_row("work_items", ids["takeover"])
    assert work is not None and work["status"] == "done"


def test_the_inbox_is_paged_and_refuses_a_bad_page(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    for n in range(53):
        services.store.append(SYSTEM_STREAM, [received(f"SM{n:03}", f"text {n}", "+14155550199")])
    client = signed_in("admin")

    first = get(client, "/console/inbox").get_data(as_text=True)
    second = get(client, "/console/inbox?page=2").get_data(as_text=True)
    bad = get(client, "/console/inbox?page=zero")

    assert len(_ids(first)) == 50 and len(_ids(second)) == 3
    assert "text 52" in first and "text 0<" in second
    assert 'id="older"' in first and 'id="newer"' in second
    assert bad.status_code == 400 and "not a page number" in bad.get_data(as_text=True)


def test_a_supervisor_sees_only_participants_with_an_alert_for_supervisors(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    ids = _seed(services)
    services.store.append(
        participant_stream(ids["held"]),
        [AlertRaised(alert_id="a-1", kind="crisis", summary="flagged")],
    )
    supervisor = signed_in("supervisor")

    page = get(supervisor, "/console/inbox").get_data(as_text=True)
    assert _ids(page) == [ids["takeover"]]
    assert "who is this?" not in page  # unknown senders are not a supervisor's
    refused = post(supervisor, f"/console/inbox/{ids['opted_out']}/handled")
    assert refused.status_code == 404
    assert all(
        e.event_type != "message.handled"
        for e in services.store.load(participant_stream(ids["held"]))
    )
    assert post(supervisor, f"/console/inbox/{ids['takeover']}/handled").status_code == 302
    assert _ids(get(supervisor, "/console/inbox").get_data(as_text=True)) == []
    # The admin still sees the others.
    admin_page = get(signed_in("admin"), "/console/inbox").get_data(as_text=True)
    assert _ids(admin_page) == [ids["unknown"], ids["opted_out"]]
