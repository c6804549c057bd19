"""How `tandem export` writes a file: each value as a cell, rows as CSV (what the csv module's
default dialect writes) or JSON Lines, into an owner-only `.partial` file renamed into place.

A CSV cell of text that starts with `=`, `+`, `-`, `@`, a tab or a carriage return is written
after a `'` (OWASP's rule against formula injection: a spreadsheet would run it), unless the
whole cell reads as a number (`-3`, `+15145550199`: a number is no formula). JSON Lines are
written as they are."""

from __future__ import annotations

import io
import json
import math
import os
import re
import shutil
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, overload

import orjson

Format = Literal["csv", "jsonl"]


_dumps = orjson.dumps


def iso(value: datetime) -> str:
    """`value.isoformat()`, by orjson where the two write the same text (cheaper, and an
    export writes five times or more for each message): a time in
    UTC, or in a zone whose offset then is of whole minutes. An offset with seconds (a zone's
    local mean time before 1900, say), which orjson cuts to minutes, a naive time, or a zone
    orjson does not read (or a subclass of datetime, which it refuses), is written by
    isoformat."""
    if value.tzinfo is not UTC:
        offset = value.utcoffset()
        if offset is None or offset.microseconds or offset.seconds % 60:
            return value.isoformat()
    try:
        return _dumps(value)[1:-1].decode()
    except orjson.JSONEncodeError:
        return value.isoformat()


def naive(value: datetime | None) -> str | None:
    """An aware local time as a naive one to the second, `YYYY-MM-DDTHH:MM:SS` (the first 19
    characters of its `iso`; None for None): one format for every row, so that pandas and
    spreadsheets read a column of them whatever their offsets (the participant's clock)."""
    return None if value is None else iso(value)[:19]


def _iso(value: object) -> str:
    if isinstance(value, datetime):
        return iso(value)
    raise TypeError(f"cannot export a {type(value).__name__}")


# What orjson leaves to `default` (`_iso`): times, written as `iso` writes every other time
# the export holds, and dataclasses, which no cell holds and `_iso` refuses.
_PASS_TO_ISO = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
_json_encoder = json.JSONEncoder(ensure_ascii=False, default=_iso, separators=(",", ":"))


def _json_text(value: object) -> str:
    """`to_json` by `json`, for what orjson refuses (an integer past 64 bits, a key that is not
    a string, a lone surrogate): the same text, a non-finite float null as orjson writes it."""
    return _json_encoder.encode(_finite(value))


def _finite(value: object) -> object:
    """`value` with each NaN or infinite float in it None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def to_json(value: object) -> str:
    """A dict's or list's JSON as the export writes it (a cell, a JSON Lines row): compact, not
    ASCII-escaped, times in ISO 8601. By orjson, at a fraction of `json`'s cost: events.csv
    writes two an event. A float that is not a number (NaN or
    infinite: no JSON holds one) is written `null`, as the store itself stores it."""
    try:
        return orjson.dumps(value, default=_iso, option=_PASS_TO_ISO).decode()
    except orjson.JSONEncodeError:
        return _json_text(value)


# Cells written as they are: most cells of an export (checked first, by exact type).
_AS_IS = frozenset((str, int, float))


def cell(value: object) -> object:
    """A value as its CSV cell holds it (JSON for dicts and lists, ISO 8601 for times)."""
    if type(value) in _AS_IS:
        return value
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return iso(value)
    if isinstance(value, dict | list | tuple):
        return to_json(value)
    return value


# The characters that put a CSV cell in quotes (the csv module's default dialect). A cell
# holds one only if the row's cells joined hold one, so a row is searched once.
NEEDS_QUOTES = re.compile('[,"\r\n]').search
# What a spreadsheet reads as the start of a formula (OWASP), and a cell after the first that
# starts with one, searched in a row of cells without quotes joined by commas (a pattern that
# starts with a comma: searched for it first, ten times faster than one that starts with `^|,`).
FORMULA_START = frozenset("=+-@\t\r")
_FORMULA_AFTER_COMMA = re.compile(",[=+\\-@\t]").search


def defused(text: str) -> str:
    """A cell's text, after a `'` if a spreadsheet would read it as a formula: it starts with
    one of FORMULA_START and is not a number (see the module's docstring)."""
    if text[:1] not in FORMULA_START:
        return text
    try:
        float(text)
    except ValueError:
        return "'" + text
    return text


def quoted(text: str) -> str:
    """A cell's text as the csv module's default dialect writes it: in quotes (its quotes
    doubled) when it holds a comma, a quote or a line break. (Not `defused`: a row made of
    quoted cells is checked whole, `safe_line`.)"""
    if NEEDS_QUOTES(text) is None:
        return text
    return '"' + text.replace('"', '""') + '"'


def _text(value: object) -> str:
    """The text the csv module writes for `cell(value)` (str() of what is not a str), before
    quoting. The commonest types first, by exact type."""
    kind = type(value)
    if kind is str:
        return value  # type: ignore[return-value]  # narrowed by exact type above
    if value is None:
        return ""
    if kind is int or kind is float:
        return str(value)
    if kind is datetime:
        return iso(value)  # type: ignore[arg-type]  # narrowed by exact type above
    if kind is dict or kind is list:
        if not value:
            return "{}" if kind is dict else "[]"
        return to_json(value)
    value = cell(value)
    if isinstance(value, str):
        return str.__str__(value)
    return str(value)


def csv_line(values: Iterable[object]) -> str:
    """One CSV row of `values`, with their `cell`s, exactly as `csv.writer(file).writerow`
    writes it: built here because the csv module copies every character into a 4-byte
    buffer and checks each one, which made writing an event's JSON cost more than reading it.
    One search of the joined cells finds whether any cell needs quotes (most rows: none).
    Text and empty cells, most of a row's, are taken here without a call to `_text`."""
    texts = [v if type(v) is str else "" if v is None else _text(v) for v in values]
    if len(texts) == 1 and not texts[0]:
        return '""\r\n'  # a row of one empty cell is written as an empty quoted cell
    return _joined(texts) + "\r\n"


def csv_cells(values: Iterable[object]) -> str:
    """Cells of a row of more than one cell, as `csv_line` writes them, joined by commas (for
    a row made a few cells at a time: bot.reporting.messages), with one search for
    quotes for them all, not one for each."""
    return _joined([v if type(v) is str else "" if v is None else _text(v) for v in values])


def _joined(texts: list[str]) -> str:
    """Cells' texts, each `defused` and quoted if it needs to be, joined by commas: most rows
    need neither, found by one search for quotes and one for a formula's start."""
    if NEEDS_QUOTES("".join(texts)) is None:
        line = ",".join(texts)
        if line[:1] not in FORMULA_START and _FORMULA_AFTER_COMMA(line) is None:
            return line
    return ",".join([quoted(defused(t)) if t[:1] in FORMULA_START else quoted(t) for t in texts])


def csv_cell(value: object) -> str:
    """`value`'s cell as `csv_line` writes it in a row of more than one cell: its text,
    `defused`, in quotes if it needs them (for a row made cell by cell: bot.reporting.messages)."""
    text = value if isinstance(value, str) else "" if value is None else _text(value)
    return quoted(defused(text))


def json_line(columns: Sequence[str], record: dict[str, Any]) -> str:
    """One JSON Lines row: `record`'s `columns`, in order."""
    return to_json({c: record.get(c) for c in columns}) + "\n"


class Writer:
    """Rows to `<name>.<fmt>`, written to a `.partial` file renamed into place at the end.

    A worker process's `part` of the file (bot.store.jobs) is `.<name>.<fmt>.part-N`,
    its rows without the header; the export's own Writer of the file takes it (`append`)."""

    def __init__(
        self, out_dir: Path, name: str, fmt: Format, columns: Sequence[str], part: int | None = None
    ) -> None:
        self.path = out_dir / (f"{name}.{fmt}" if part is None else part_name(name, fmt, part))
        self.partial = self.path.with_name(self.path.name + ".partial")
        self.fmt = fmt
        self.columns = columns
        self.header = part is None and fmt == "csv"
        self.file: io.TextIOWrapper | None = None

    def __enter__(self) -> Writer:
        self.file = private(self.partial, newline="")
        if self.header:
            self.file.write(csv_line(self.columns))
        return self

    def append(self, part: Path) -> None:
        """The rows of a part of this file another Writer wrote, copied as they are."""
        assert self.file is not None
        self.file.flush()
        with part.open("rb") as rows:
            shutil.copyfileobj(rows, self.file.buffer, 1024 * 1024)
        self.file.buffer.flush()

    def write(self, record: dict[str, Any]) -> None:
        assert self.file is not None
        if self.fmt == "csv":
            self.file.write(csv_line(map(record.get, self.columns)))
        else:
            self.file.write(json_line(self.columns, record))

    def write_encoded(self, rows: bytes) -> None:
        """Rows already written as text (each as `write_line` takes one), one after the
        other, UTF-8 encoded."""
        assert self.file is not None
        self.file.flush()
        self.file.buffer.write(rows)

    def write_line(self, line: str) -> None:
        """A row already written as text (a `csv_line` or `json_line` of this file's columns)."""
        assert self.file is not None
        self.file.write(line)

    def __exit__(self, kind: object, *_rest: object) -> None:
        assert self.file is not None
        self.file.close()
        if kind is None:
            into_place(self.partial, self.path)
        else:
            self.partial.unlink(missing_ok=True)


def part_name(name: str, fmt: Format, part: int) -> str:
    """The file a worker process writes its part of `<name>.<fmt>` to."""
    return f".{name}.{fmt}.part-{part}"


def document(out_dir: Path, name: str, text: str) -> str:
    """A text file of the export (owner-only, replaced whole); its name."""
    path = out_dir / name
    partial = path.with_name(name + ".partial")
    with private(partial) as file:
        file.write(text)
    into_place(partial, path)
    return name


def into_place(partial: Path, path: Path) -> None:
    """`partial`, written and closed, renamed to `path`, any file of that name (a previous
    export's) removed first. Not renamed over it: ext4 (auto_da_alloc) starts writing a file
    renamed over another out to disk before the rename returns, which held up the export's own
    process after its workers had ended. An export's files are made again from the events
    table; a moment without the file, in a folder being exported into, costs nothing."""
    path.unlink(missing_ok=True)
    os.replace(partial, path)


@overload
def private(partial: Path, newline: str | None = None) -> io.TextIOWrapper: ...
@overload
def private(partial: Path, *, binary: Literal[True]) -> io.BufferedWriter: ...


def private(
    partial: Path, newline: str | None = None, *, binary: bool = False
) -> io.TextIOWrapper | io.BufferedWriter:
    """`partial` created anew for writing (as text, or `binary`), owner-only from the start:
    an export holds participants' phone numbers and texts."""
    partial.unlink(missing_ok=True)
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    if binary:
        return open(fd, "wb")  # noqa: SIM115
    return open(fd, "w", encoding="utf-8", newline=newline)  # noqa: SIM115
