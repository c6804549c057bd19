"""The JSON of stored columns: orjson where it can, `json` for what orjson refuses, and the
same values back either way."""

from __future__ import annotations

import json

import pytest

from bot.store.database import json_dumps, json_loads


@pytest.mark.parametrize(
    "value",
    [
        {"body": "héllo \u2603 \U0001f600", "n": 3, "x": 1.5, "none": None, "ok": True},
        {"ring": [[1, "2026-11-26T14:45:00.123456+00:00"], [2, "x"]], "nested": {"a": []}},
        {"big": 2**70},  # past 64 bits: orjson refuses, json writes it
        {1: "an integer key"},  # json writes it as "1"; orjson refuses
    ],
)
def test_what_is_written_reads_back_as_json_would_read_it(value: object) -> None:
    written = json_dumps(value)
    assert json_loads(written) == json.loads(json.dumps(value))
    assert json_loads(written.encode()) == json.loads(json.dumps(value))  # psycopg hands bytes


def test_nan_that_json_wrote_into_older_rows_still_reads() -> None:
    value = json_loads(json.dumps({"v": float("nan")}))
    assert value["v"] != value["v"]


def test_text_that_is_not_json_is_still_an_error() -> None:
    with pytest.raises(ValueError):
        json_loads("{not json")
