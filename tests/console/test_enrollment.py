"""Enrolling from the console: the form, and a CSV with a dry run that writes nothing."""

from __future__ import annotations

import io
import re
from collections.abc import Callable

from flask.testing import FlaskClient
from sqlalchemy import func, select

from bot.store.schema import events, participants
from bot.store.services import Services
from tests.console.conftest import get, post

CSV = (
    "phone,name,timezone\n"
    "+14155552671,Ada,Europe/London\n"
    "not a phone,Bo,\n"
    "+14155552672,Cy,Mars/Olympus\n"
    "+14155552673,Di,\n"
)


def _count(services: Services, table=participants) -> int:  # noqa: ANN001
    with services.store.reading() as conn:
        return int(conn.execute(select(func.count()).select_from(table)).scalar())


def test_enrolling_one_records_the_staff_member_and_opens_their_page(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    client = signed_in("researcher")

    response = post(client, "/console/enroll", {"phone": "+1 415 555 2671", "name": "Ada"})

    assert response.status_code == 302 and "/console/participants/" in response.headers["Location"]
    with services.store.reading() as conn:
        row = conn.execute(select(participants)).one()
        meta = conn.execute(
            select(events.c.meta).where(events.c.event_type == "participant.enrolled")
        ).scalar_one()
    assert row.phone == "+14155552671" and row.name == "Ada"
    assert meta == {"actor": "staff:researcher@example.org"}


def test_the_enroll_form_puts_each_problem_beside_its_field_and_writes_nothing(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    client = signed_in("researcher")

    response = post(
        client,
        "/console/enroll",
        {"phone": "12", "timezone": "Mars/Olympus", "intervention": "nope", "channel": "fax"},
    )

    assert response.status_code == 400
    page = response.get_data(as_text=True)
    assert 'id="phone-error">not a phone number' in page
    assert "not a phone number: not a phone number" not in page  # said once
    assert 'id="timezone-error">unknown timezone' in page
    assert 'id="intervention-error">no intervention named' in page
    assert "channel must be sms or whatsapp" in page
    assert _count(services) == 0


def test_a_csv_dry_run_reports_each_row_and_writes_nothing_until_confirmed(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    client = signed_in("researcher")

    dry = post(
        client,
        "/console/enroll/csv",
        {"file": (io.BytesIO(CSV.encode()), "people.csv")},
        content_type="multipart/form-data",
    )

    page = dry.get_data(as_text=True)
    assert dry.status_code == 200
    assert "will enroll +14155552671" in page and "will enroll +14155552673" in page
    assert "phone: not a phone number" in page and "timezone: unknown timezone" in page
    assert "not a phone number: not a phone number" not in page  # said once
    assert "2 rows will be enrolled; 2 rows with problems will be left out" in page
    assert _count(services) == 0 and _count(services, events) > 0  # only staff events so far

    fingerprint = re.search(r'name="fingerprint" value="([^"]+)"', page).group(1)
    done = post(
        client,
        "/console/enroll/csv",
        {"confirm": "yes", "fingerprint": fingerprint, "content": CSV},
    )
    assert "2 participants enrolled" in done.get_data(as_text=True)
    assert 'id="enrolled"' in done.get_data(as_text=True)  # who, listed
    with services.store.reading() as conn:
        phones = sorted(r.phone for r in conn.execute(select(participants.c.phone)))
    assert phones == ["+14155552671", "+14155552673"]


def test_a_csv_confirmed_after_the_participants_changed_is_refused_as_stale(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    client = signed_in("researcher")
    dry = post(client, "/console/enroll/csv", {"content": CSV}).get_data(as_text=True)
    fingerprint = re.search(r'name="fingerprint" value="([^"]+)"', dry).group(1)
    post(client, "/console/enroll", {"phone": "+14155552673"})  # enrolled meanwhile

    stale = post(
        client,
        "/console/enroll/csv",
        {"confirm": "yes", "fingerprint": fingerprint, "content": CSV},
    )

    assert stale.status_code == 409
    assert "changed since the dry run; nothing was written" in stale.get_data(as_text=True)
    assert _count(services) == 1


def test_a_csv_with_an_unknown_column_is_refused_whole(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    client = signed_in("researcher")

    response = post(client, "/console/enroll/csv", {"content": "phone,shoe size\n+14155552671,9\n"})

    assert response.status_code == 400
    assert "Unknown column(s) shoe size" in response.get_data(as_text=True)
    assert get(client, "/console/participants").status_code == 200 and _count(services) == 0


def test_a_csv_dry_run_refuses_each_row_of_an_llm_intervention_when_none_is_configured(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    client = signed_in("researcher")
    rows = "phone,intervention\n+14155552671,ot-mentor\n+14155552672,demo\n"

    dry = post(client, "/console/enroll/csv", {"content": rows})

    page = dry.get_data(as_text=True)
    assert "will enroll +14155552672" in page
    assert "will enroll +14155552671" not in page
    assert "needs an LLM — not configured" in page and "set OPENAI_API_KEY" in page
    assert _count(services) == 0


def test_a_csv_dry_run_refuses_a_whatsapp_row_when_no_template_is_configured(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    client = signed_in("researcher")
    rows = "phone,channel,intervention\n+14155552671,whatsapp,demo\n+14155552672,sms,demo\n"

    dry = post(client, "/console/enroll/csv", {"content": rows})

    page = dry.get_data(as_text=True)
    assert "will enroll +14155552672" in page
    assert "will enroll +14155552671" not in page
    assert "whatsapp_template: HX&lt;32 hex&gt;" in page and "WHATSAPP_TEMPLATE_SID" in page
    assert _count(services) == 0


def test_the_enroll_form_offers_the_catalogue_s_interventions_as_a_list(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    client = signed_in("researcher")

    page = get(client, "/console/enroll").get_data(as_text=True)

    chooser = re.search(r'<select id="intervention" name="intervention">(.*?)</select>', page, re.S)
    assert chooser, "the intervention is chosen from a list"
    offered = re.findall(r'<option value="([^"]*)"', chooser.group(1))
    assert offered[0] == "" and "blank: INTERVENTION" not in page
    assert set(offered[1:]) and services.settings.intervention in offered


def test_one_csv_row_is_counted_in_the_singular_and_its_participant_listed(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    client = signed_in("researcher")
    one = "phone,name\n+14155552671,Ada\n"

    dry = post(
        client,
        "/console/enroll/csv",
        {"file": (io.BytesIO(one.encode()), "one.csv")},
        content_type="multipart/form-data",
    ).get_data(as_text=True)

    assert "1 row will be enrolled; 0 rows with problems" in dry and "1 rows" not in dry
    assert "Enroll 1 participant<" in dry
    fingerprint = re.search(r'name="fingerprint" value="([^"]+)"', dry).group(1)
    confirm = {"confirm": "yes", "fingerprint": fingerprint, "content": one}
    done = post(client, "/console/enroll/csv", confirm).get_data(as_text=True)
    assert "1 participant enrolled" in done and "1 participants" not in done
    listed = done.split('id="enrolled"')[1]
    assert "+14155552671" in listed


def test_a_welcome_held_by_quiet_hours_is_shown_on_their_page_with_when_it_goes(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    """12:00 UTC is 07:00 in Toronto, inside QUIET_HOURS 22:00-08:00: the welcome waits."""
    client = signed_in("researcher")

    response = post(
        client, "/console/enroll", {"phone": "+1 415 555 2671", "timezone": "America/Toronto"}
    )

    page = get(client, response.headers["Location"]).get_data(as_text=True)
    assert 'id="welcome-held"' in page
    assert "the welcome waits until 2026-01-05 08:00 their time (13:00 UTC)" in page
