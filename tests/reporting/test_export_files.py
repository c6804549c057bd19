"""The export's CSV rows are byte for byte what the csv module writes for the same cells (those
a spreadsheet would run as a formula after a quote), and
events.csv's rows, written directly, what `csv_line` writes for the event's values."""

from __future__ import annotations

import csv
import enum
import io
import os
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.reporting.cells import Writer, cell, csv_line, document, iso, to_json
from bot.reporting.export import event_line, event_values
from bot.store.scan import StoredEvent


class Colour(str, enum.Enum):  # noqa: UP042  (its str() is not its text, as csv reads it)
    RED = 'red, or "scarlet"'


def _csv_module(values: list[object]) -> str:
    """What the csv module writes for the cells, each text cell a spreadsheet would run as a
    formula (it starts with = + - @, a tab or a CR, and Python does not read it as a number)
    after a `'`, as the codebook says the export writes it."""
    buffer = io.StringIO()
    csv.writer(buffer).writerow([_spreadsheet_safe(cell(v)) for v in values])
    return buffer.getvalue()


def _spreadsheet_safe(value: object) -> object:
    if not isinstance(value, str) or not value or value[0] not in "=+-@\t\r":
        return value
    try:
        float(value)
    except ValueError:
        return "'" + str.__str__(value)
    return value


_TIMES = st.datetimes(timezones=st.just(UTC)) | st.datetimes(
    timezones=st.just(timezone(timedelta(hours=5, minutes=30)))
)
_TEXT = st.text(alphabet=st.sampled_from(list(',"\r\n\x00 aé€😀\t\\{}[]:')) | st.characters())
_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | _TEXT | _TIMES
_VALUES = _SCALARS | st.lists(_SCALARS, max_size=3) | st.dictionaries(_TEXT, _SCALARS, max_size=3)


@given(st.lists(_VALUES, max_size=8))
def test_a_row_is_written_as_the_csv_module_writes_it(values: list[object]) -> None:
    assert csv_line(values) == _csv_module(values)


def test_the_edge_rows_are_written_as_the_csv_module_writes_them() -> None:
    rows: list[list[object]] = [
        [],
        [""],
        [None],
        ["", ""],
        [{}],
        [[]],
        [Colour.RED, 3, 2.5, True, None],
        [{"a": [1, "x,y"], "b": {"c": None}}, ("t", 1)],
        [datetime(2026, 1, 31, tzinfo=UTC), "line\r\nbreak", " lead", "trail "],
    ]
    for row in rows:
        assert csv_line(row) == _csv_module(row), row


TORONTO = ZoneInfo("America/Toronto")
# Times in a repeated hour (01:30 on 2026-11-01 in Toronto, once in EDT and once in EST, told
# apart only by `fold`), and in other zones, beside UTC.
_EVENT_TIMES = _TIMES | st.sampled_from(
    [
        datetime(2026, 11, 1, 1, 30, tzinfo=TORONTO),
        datetime(2026, 11, 1, 1, 30, fold=1, tzinfo=TORONTO),
        datetime(2026, 11, 1, 5, 30, 0, 1, tzinfo=UTC),
    ]
)
_OBJECTS = st.dictionaries(_TEXT, _VALUES, max_size=3)


@given(
    st.builds(
        StoredEvent,
        seq=st.integers(1, 2**40),
        event_id=st.uuids().map(str),
        stream_id=st.sampled_from(["system", "participant:p-1"]) | _TEXT,
        stream_version=st.integers(0, 10**6),
        event_type=st.sampled_from(["message.received", "a,b"]),
        schema_version=st.integers(1, 3),
        data=_OBJECTS | _VALUES,
        meta=st.none() | _OBJECTS | _VALUES,
        idempotency_key=st.none() | st.sampled_from(["SM1", "a,b", 'q"', "l\r\n"]) | _TEXT,
        occurred_at=_EVENT_TIMES,
        recorded_at=_EVENT_TIMES,
    )
)
def test_an_events_row_is_what_csv_line_writes_for_its_values(raw: StoredEvent) -> None:
    assert event_line(raw) == csv_line(event_values(raw))


def test_an_events_row_with_text_that_needs_quotes_is_what_csv_line_writes() -> None:
    at = datetime(2026, 1, 31, 8, 0, tzinfo=UTC)
    rows = [
        StoredEvent(1, "e", "system", 1, "x.y", 1, {"a": 1}, {}, key, at, at)
        for key in (None, "", "SM1", "a,b", 'say "hi"', "two\nlines", "cr\r")
    ]
    rows += [
        StoredEvent(2, "e,1", "system", 1, "x.y", 1, {}, None, None, at, at),
        StoredEvent(3, "e", 'st"ream', 1, "x.y", 1, [], {"erased": ["body"]}, None, at, at),
        StoredEvent(4, "e", "system", 1, "x\ny", 1, "text", [1], None, at, at),
    ]
    for raw in rows:
        assert event_line(raw) == csv_line(event_values(raw)), raw


def test_an_events_row_in_the_repeated_hour_keeps_its_own_offset() -> None:
    first, second = (datetime(2026, 11, 1, 1, 30, fold=f, tzinfo=TORONTO) for f in (0, 1))
    rows = [
        StoredEvent(1, "e", "system", 1, "x.y", 1, {"a": 1}, {}, None, at, at.astimezone(UTC))
        for at in (first, second)
    ]
    assert [event_line(r).split(",")[6:8] for r in rows] == [
        ["2026-11-01T01:30:00-04:00", "2026-11-01T05:30:00+00:00"],
        ["2026-11-01T01:30:00-05:00", "2026-11-01T06:30:00+00:00"],
    ]


def test_the_same_instant_written_again_in_another_zone_or_fold_keeps_its_own_text() -> None:
    first, second = (datetime(2026, 11, 1, 1, 30, fold=f, tzinfo=TORONTO) for f in (0, 1))
    at = first.astimezone(UTC)
    india = at.astimezone(timezone(timedelta(hours=5, minutes=30)))
    times = [at, at, india, first, first.replace(fold=1), at, second, first, india]
    assert [iso(t) for t in times] == [t.isoformat() for t in times]


def test_times_whose_offset_has_seconds_or_no_offset_are_each_their_isoformat() -> None:
    """orjson cuts an offset to whole minutes; a zone's local mean time (Toronto's -5:17:32
    until 1895, Monrovia's -0:44:30 until 1972), a fixed offset with seconds and a naive time
    are written as isoformat writes them."""
    times = [
        datetime(1880, 6, 1, 12, 0, tzinfo=TORONTO),
        datetime(1960, 6, 1, 12, 0, 0, 5, tzinfo=ZoneInfo("Africa/Monrovia")),
        datetime(2026, 1, 1, tzinfo=timezone(timedelta(hours=-3, seconds=-15))),
        datetime(2026, 1, 1, tzinfo=timezone(timedelta(microseconds=5))),
        datetime(2026, 1, 1, 8, 30, 0, 250),  # noqa: DTZ001 - a naive time, on purpose
    ]
    assert [iso(t) for t in times] == [t.isoformat() for t in times]
    assert iso(times[0]) == "1880-06-01T12:00:00-05:17:32"


class _Stamp(datetime):
    """A subclass of datetime (orjson refuses one) with a text of its own."""

    def isoformat(self, sep: str = "T", timespec: str = "auto") -> str:
        return "stamp " + super().isoformat(sep, timespec)


def test_a_subclass_of_datetime_is_written_by_its_own_isoformat() -> None:
    for zone in (UTC, TORONTO):
        at = _Stamp(2026, 3, 8, 7, 0, tzinfo=zone)
        assert iso(at) == at.isoformat()
        assert iso(at).startswith("stamp 2026-03-08T07:00:00")


def test_a_utc_instant_in_a_zone_named_utc_keeps_its_own_text() -> None:
    at = datetime(2026, 3, 8, 7, 0, tzinfo=UTC)
    named = at.astimezone(ZoneInfo("UTC"))
    india = at.astimezone(timezone(timedelta(hours=5, minutes=30)))
    times = [at, named, at, india, at]
    assert [iso(t) for t in times] == [t.isoformat() for t in times]


@given(st.lists(_TIMES | st.datetimes(timezones=st.just(TORONTO) | st.timezones()), max_size=8))
def test_times_written_one_after_another_are_each_their_isoformat(times: list[datetime]) -> None:
    doubled = [t for time in times for t in (time, time, time.replace(fold=1 - time.fold))]
    assert [iso(t) for t in doubled] == [t.isoformat() for t in doubled]


def test_json_cells_are_compact_utf8_json_with_iso_times() -> None:
    """By orjson, and by `json` (the same text) for what orjson refuses."""
    toronto = datetime(2026, 1, 31, 8, 0, tzinfo=TORONTO)
    assert to_json({"a": [1, "caf\u00e9 \U0001f600"], "b": None, "c": True, "t": toronto}) == (
        '{"a":[1,"caf\u00e9 \U0001f600"],"b":null,"c":true,"t":"2026-01-31T08:00:00-05:00"}'
    )
    # past 64 bits, a key that is not text, a lone surrogate: `json`, compact as well
    assert to_json([2**70, {1: "x"}, "\ud800"]) == '[1180591620717411303424,{"1":"x"},"\ud800"]'
    assert to_json([float("nan"), float("-inf"), 2.5]) == "[null,null,2.5]"  # no JSON holds NaN
    assert to_json({"n": 2**70, "x": [float("nan")]}) == '{"n":1180591620717411303424,"x":[null]}'
    assert to_json([Colour.RED]) == '["red, or \\"scarlet\\""]'
    for refused in (object(), StoredEvent):
        with pytest.raises(TypeError, match="cannot export"):
            to_json([refused])


def test_a_file_written_again_replaces_the_last_one_whole_and_owner_only(tmp_path: Path) -> None:
    """An export into a folder a previous one wrote to: each file is the new one (not the old
    with the new appended or mixed in), readable by its owner only however the old one was,
    and no partial file is left behind."""
    old = tmp_path / "events.csv"
    old.write_text("seq\r\n1\r\n2\r\n3\r\n" * 1000, encoding="utf-8")
    os.chmod(old, 0o644)
    (tmp_path / "codebook.md").write_text("an old codebook, longer than the new", encoding="utf-8")
    with Writer(tmp_path, "events", "csv", ["seq"]) as out:
        out.write_line("9\r\n")
    document(tmp_path, "codebook.md", "new")
    assert old.read_bytes() == b"seq\r\n9\r\n"
    assert (tmp_path / "codebook.md").read_text(encoding="utf-8") == "new"
    assert {p.name: p.stat().st_mode & 0o777 for p in tmp_path.iterdir()} == {
        "events.csv": 0o600,
        "codebook.md": 0o600,
    }


def test_a_file_that_fails_midway_leaves_the_last_one_and_no_partial_file(tmp_path: Path) -> None:
    old = tmp_path / "events.csv"
    old.write_bytes(b"seq\r\n1\r\n")
    with pytest.raises(RuntimeError), Writer(tmp_path, "events", "csv", ["seq"]) as out:
        out.write_line("2\r\n")
        raise RuntimeError("the export failed")
    assert list(tmp_path.iterdir()) == [old]
    assert old.read_bytes() == b"seq\r\n1\r\n"
