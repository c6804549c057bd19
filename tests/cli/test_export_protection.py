"""Exports protect what they carry: owner-only files, a record of every export, and a
pseudonymised form with study codes instead of phone numbers and names."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from bot.core.clock import FakeClock
from bot.reporting.export import export, study_code
from bot.store.event_store import EventStore
from tests.cli.test_export import read_csv, read_jsonl, study


def _text_of(folder: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(folder.iterdir()))


def test_export_files_and_a_new_folder_are_readable_by_their_owner_only(
    store: EventStore, clock: FakeClock, tmp_path: Path
) -> None:
    study(store, clock)
    export(store, tmp_path / "out", "csv")

    assert stat.S_IMODE((tmp_path / "out").stat().st_mode) == 0o700
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "out").iterdir()}
    assert set(modes) == {
        "participants.csv",
        "allocations.csv",
        "broadcasts.csv",
        "messages.csv",
        "results.csv",
        "retrievals.csv",
        "forms.csv",
        "decisions.csv",
        "instruments.csv",
        "evaluations.csv",
        "events.csv",
    }
    assert set(modes.values()) == {0o600}


def test_every_export_is_recorded_with_who_made_it_and_what_it_held(
    store: EventStore, clock: FakeClock, tmp_path: Path
) -> None:
    ids = study(store, clock)
    export(store, tmp_path, "jsonl", participant_ids=[ids["toronto"]], actor="cli:ana")

    [record] = [e for e in store.load("system") if e.event_type == "export.written"]
    assert record.meta["actor"] == "cli:ana"
    assert (record.data.format, record.data.participant_ids) == ("jsonl", [ids["toronto"]])
    assert record.data.files == [
        "participants.jsonl",
        "allocations.jsonl",
        "broadcasts.jsonl",
        "messages.jsonl",
        "results.jsonl",
        "retrievals.jsonl",
        "forms.jsonl",
        "decisions.jsonl",
        "instruments.jsonl",
        "evaluations.jsonl",
        "events.jsonl",
    ]
    assert (record.data.participants, record.data.pseudonymised) == (1, False)


def test_a_pseudonymised_export_has_study_codes_and_no_phone_numbers_or_names(
    store: EventStore, clock: FakeClock, tmp_path: Path
) -> None:
    ids = study(store, clock)
    out = tmp_path / "out"
    export(store, out, "csv", pseudonymise=True)

    people = read_csv(out / "participants.csv")
    assert [p["study_code"] for p in people] == [
        study_code(ids["toronto"]),
        study_code(ids["kolkata"]),
    ]
    assert "phone_number" not in people[0] and "name" not in people[0]
    written = _text_of(out)
    for secret in ("+14155552671", "+919876543210", "14155552671", ids["toronto"]):
        assert secret not in written
    assert sorted(p.name for p in out.iterdir()) == [
        "allocations.csv",
        "broadcasts.csv",
        "decisions.csv",
        "evaluations.csv",
        "forms.csv",
        "instruments.csv",
        "messages.csv",
        "participants.csv",
        "results.csv",
        "retrievals.csv",
    ]
    assert "winter hello" in [m["text"] for m in read_csv(out / "messages.csv")]


def test_free_text_can_be_dropped_from_a_pseudonymised_export(
    store: EventStore, clock: FakeClock, tmp_path: Path
) -> None:
    study(store, clock)
    out = tmp_path / "out"
    export(store, out, "jsonl", pseudonymise=True, free_text="drop")

    messages = read_jsonl(out / "messages.jsonl")
    assert messages and all("text" not in m and "media" not in m for m in messages)
    assert "hello" not in _text_of(out)
    assert "profile" not in read_jsonl(out / "participants.jsonl")[0]


def test_a_study_code_is_the_same_in_every_export(
    store: EventStore, clock: FakeClock, tmp_path: Path
) -> None:
    study(store, clock)
    export(store, tmp_path / "a", "csv", pseudonymise=True)
    export(store, tmp_path / "b", "csv", pseudonymise=True)

    codes = [[p["study_code"] for p in read_csv(tmp_path / d / "participants.csv")] for d in "ab"]
    assert codes[0] == codes[1] and all(c.startswith("P-") and len(c) == 12 for c in codes[0])


@pytest.mark.parametrize("mode", ["keep", "drop"])
def test_the_record_of_a_pseudonymised_export_says_so(
    store: EventStore, clock: FakeClock, tmp_path: Path, mode: str
) -> None:
    study(store, clock)
    export(store, tmp_path, "csv", pseudonymise=True, free_text=mode)  # type: ignore[arg-type]

    [record] = [e for e in store.load("system") if e.event_type == "export.written"]
    assert (record.data.pseudonymised, record.data.free_text, record.data.events) == (
        True,
        mode,
        0,
    )
