"""The console's alert page quotes the message that raised the alert; once the participant is
erased the quote reads as erased."""

from __future__ import annotations

from collections.abc import Callable

from flask.testing import FlaskClient

from bot.services import erasure
from bot.store.event_types.alerts import AlertRaised
from bot.store.events import participant_stream
from bot.store.personal import ERASED
from bot.store.services import Services
from tests.console.conftest import get
from tests.factories import enrolled

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
