"""The forms panel of a participant's page: values, domain completion and the clock."""

from __future__ import annotations

import re
from collections.abc import Callable

from flask.testing import FlaskClient

from bot.store.event_types.forms import FormDomainCompleted, FormExtracted, FormValueSet
from bot.store.events import participant_stream
from bot.store.services import Services
from tests.console.conftest import get
from tests.factories import enrolled


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_a_participants_form_shows_its_values_domains_and_clock(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    data = enrolled(name="Ada", intervention="health-intake")
    services.store.append(
        participant_stream(data.participant_id),
        [
            data,
            FormExtracted(form="intake", domain="basic_info"),
            FormValueSet(form="intake", key="age", value=47),
            FormValueSet(form="intake", key="occupation", value="nurse"),
            FormDomainCompleted(form="intake", domain="basic_info"),
            FormExtracted(form="intake", domain="sleep"),
        ],
    )
    client = signed_in("researcher")

    page = get(client, f"/console/participants/{data.participant_id}").get_data(as_text=True)

    panel = page[
        page.index('id="form-intake"') : page.index("</section>", page.index('id="form-intake"'))
    ]
    text = _text(panel)
    assert "Form: Health intake" in text and "in progress" in text
    assert re.search(
        r"Fields known 2 of \d+ · critical 1 of \d+ · turns 2 of a target of 30 \(28 left\)", text
    )
    assert "Basic information 1 of ~2 2 of 2 complete" in text
    assert "Sleep 1 of ~2" in text and "open" in text
    assert re.search(r"age \* basic_info 47", text) and "occupation basic_info nurse" in text


def test_a_participant_without_forms_has_no_forms_panel(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    data = enrolled(name="Bo", intervention="demo")
    services.store.append(participant_stream(data.participant_id), [data])
    client = signed_in("researcher")

    page = get(client, f"/console/participants/{data.participant_id}").get_data(as_text=True)

    assert "form-panel" not in page
