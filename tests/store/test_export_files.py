"""The export's CSV rows are byte for byte what the csv module writes for the same cells."""

from __future__ import annotations

import csv
import enum
import io
from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from bot.store.export_files import cell, csv_line


class Colour(str, enum.Enum):  # noqa: UP042  (its str() is not its text, as csv reads it)
    RED = 'red, or "scarlet"'


def _csv_module(values: list[object]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer).writerow([cell(v) for v in values])
    return buffer.getvalue()


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
