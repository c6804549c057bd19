"""Exports from the console: the same files as `tandem export`, streamed, each download recorded."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from datetime import UTC, datetime

from flask.testing import FlaskClient

from bot.reporting.export import export
from bot.store.event_types.decisions import DecisionMade
from bot.store.events import participant_stream
from bot.store.services import Services
from tests.console.conftest import get
from tests.factories import enrolled, received


def test_each_download_matches_tandem_export_and_names_the_staff_member(
    signed_in: Callable[[str], FlaskClient], services: Services, tmp_path
) -> None:  # noqa: ANN001
    data = enrolled(name="Ada")
    services.store.append(participant_stream(data.participant_id), [data, received(body="hi")])
    client = signed_in("researcher")

    # First, as `tandem export` would run them in a process of its own: on PostgreSQL an export
    # reads on two connections (bot.store.prefetch), and the twelve downloads, each holding its
    # snapshot's connection open while it streams, leave too few in this test's small pool.
    export(services.store, tmp_path / "csv", "csv")
    export(services.store, tmp_path / "jsonl", "jsonl")
    downloads = {
        f"{name}.{fmt}": get(client, f"/console/export/{name}.{fmt}")
        for name in ("participants", "messages", "results", "retrievals", "forms", "events")
        for fmt in ("csv", "jsonl")
    }

    for file, response in downloads.items():
        assert response.status_code == 200, file
        assert response.is_streamed
        expected = (tmp_path / file.split(".")[1] / file).read_bytes().decode("utf-8")
        if file.startswith("events"):
            # The export.written events of the CLI exports are recorded before the downloads
            # read, those of earlier downloads as they end.
            def own(rows: list) -> list:
                return [r for r in rows if "staff" not in str(r) and "export.written" not in str(r)]

            got = own(_rows(response.get_data(as_text=True), file))
            assert got == own(_rows(expected, file))
        else:
            assert response.get_data(as_text=True) == expected, file
    recorded = [e for e in services.store.load("system") if e.event_type == "export.written"]
    downloaded = [e for e in recorded if e.meta["actor"] == "staff:researcher@example.org"]
    # Each is recorded when its stream ends (an empty one at once), so in no fixed order.
    assert sorted(f for e in downloaded for f in e.data.files) == sorted(downloads)
    counts = {e.data.files[0]: (e.data.participants, e.data.messages) for e in downloaded}
    assert [counts[f] for f in ("participants.csv", "participants.jsonl")] == [(1, 0), (1, 0)]
    assert [counts[f] for f in ("messages.csv", "messages.jsonl")] == [(0, 1), (0, 1)]
    assert [e.event_type for e in services.store.load("staff:researcher@example.org")] == [
        "staff.added", "staff.password_set", "staff.signed_in"
    ]  # fmt: skip


def test_a_download_cut_short_is_recorded_with_the_rows_sent(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    for n in range(3):
        data = enrolled(phone=f"+1415555267{n}", name=f"P{n}")
        services.store.append(participant_stream(data.participant_id), [data])
    client = signed_in("researcher")

    response = get(client, "/console/export/participants.jsonl", buffered=False)
    chunks = response.response  # the body, a line at a time, as the server sends it
    first = next(iter(chunks))
    response.close()  # the client goes away after one line

    assert json.loads(first)["name"] in {"P0", "P1", "P2"}
    [record] = [e for e in services.store.load("system") if e.event_type == "export.written"]
    assert record.meta["actor"] == "staff:researcher@example.org"
    assert record.data.participants == 1 and record.data.files == ["participants.jsonl"]


def _rows(text: str, file: str) -> list:
    if file.endswith(".jsonl"):
        return [json.loads(line) for line in text.splitlines()]
    return list(csv.reader(io.StringIO(text)))


def test_an_unknown_export_or_a_bad_date_is_refused(
    signed_in: Callable[[str], FlaskClient],
) -> None:
    client = signed_in("researcher")

    assert get(client, "/console/export/secrets.csv").status_code == 404
    bad = get(client, "/console/export/events.csv?since=yesterday")
    assert bad.status_code == 400 and "is not an ISO date" in bad.get_data(as_text=True)


def test_a_supervisor_cannot_export(signed_in: Callable[[str], FlaskClient]) -> None:
    client = signed_in("supervisor")

    assert get(client, "/console/export/participants.csv").status_code == 403
    assert "/console/export" not in get(client, "/console/alerts").get_data(as_text=True)


def test_the_codebook_downloads_describe_the_participants_interventions(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    data = enrolled(intervention="demo")
    services.store.append(participant_stream(data.participant_id), [data])
    client = signed_in("researcher")

    book = get(client, "/console/export/codebook.json")
    markdown = get(client, "/console/export/codebook.md")

    assert book.status_code == 200 and markdown.status_code == 200
    assert [i["slug"] for i in json.loads(book.get_data(as_text=True))["interventions"]] == ["demo"]
    assert "measurements.checkin" in markdown.get_data(as_text=True)
    assert "codebook.md" in get(client, "/console/export").get_data(as_text=True)
    recorded = [e for e in services.store.load("system") if e.event_type == "export.written"]
    assert [(e.data.files, e.meta["actor"]) for e in recorded] == [
        (["codebook.json"], "staff:researcher@example.org"),
        (["codebook.md"], "staff:researcher@example.org"),
    ]


def test_decisions_csv_downloads_with_each_option_and_moderator_of_the_decision_files(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    data = enrolled(name="Ada", intervention="walk-mrt")
    made = DecisionMade(
        intervention="walk-mrt", decision="walk_prompt", index=0,
        scheduled_for=datetime(2026, 3, 2, 9, tzinfo=UTC),
        available=True, probabilities={"nothing": 0.4, "suggest": 0.6}, option="suggest", u=0.7,
        moderators={"stress": 6},
    )  # fmt: skip
    services.store.append(participant_stream(data.participant_id), [data, made])
    response = get(signed_in("researcher"), "/console/export/decisions.csv")
    assert response.status_code == 200
    [row] = csv.DictReader(io.StringIO(response.get_data(as_text=True)))
    assert (row["p_nothing"], row["p_suggest"], row["mod_stress"]) == ("0.4", "0.6", "6")
    assert (row["option"], row["outcome_status"], row["undeclared"]) == ("suggest", "pending", "")
