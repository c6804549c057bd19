"""Exporting (`bot.services.export`): what is asked for is checked, every download recorded."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.interventions.interpreter.applied import INTERVENTIONS
from bot.services import export
from bot.services.refusal import Refused
from bot.store.event_store import EventStore
from bot.store.events import participant_stream
from tests.factories import enrolled

STAFF = "staff:a@example.org"


def _exports(store: EventStore) -> list:
    return [e for e in store.load("system") if e.event_type == "export.written"]


def test_a_file_that_does_not_exist_is_not_found(store: EventStore) -> None:
    with pytest.raises(Refused) as refused:
        export.file_stream(store, "secrets", "csv", since_text="", actor=STAFF)

    assert refused.value.kind == "not_found" and _exports(store) == []


def test_a_since_that_is_not_a_date_is_invalid(store: EventStore) -> None:
    with pytest.raises(Refused) as refused:
        export.file_stream(store, "messages", "csv", since_text="last tuesday", actor=STAFF)

    assert (refused.value.field, refused.value.kind) == ("since", "invalid")


def test_a_streamed_file_is_recorded_by_who_downloaded_it(store: EventStore) -> None:
    person = enrolled("+14155552671")
    store.append(participant_stream(person.participant_id), [person])

    lines = list(export.file_stream(store, "participants", "csv", since_text="", actor=STAFF))

    [written] = _exports(store)
    assert written.meta["actor"] == STAFF and written.data.participants == len(lines) - 1


def test_a_codebook_download_is_recorded(store: EventStore) -> None:
    text = export.codebook_download(store, "md", interventions=INTERVENTIONS, actor=STAFF)

    [written] = _exports(store)
    assert text and written.data.files == ["codebook.md"]


def test_exporting_an_unknown_participant_names_the_option(
    store: EventStore, tmp_path: Path
) -> None:
    with pytest.raises(Refused) as refused:
        export.to_folder(
            store,
            tmp_path,
            "csv",
            interventions=INTERVENTIONS,
            actor=STAFF,
            participant_ids=["00000000-0000-0000-0000-000000000000"],
        )

    assert refused.value.field == "participant"
