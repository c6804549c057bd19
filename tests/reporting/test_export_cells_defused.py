"""Formula injection: the CSV cells a spreadsheet would run are written after a quote, and
nothing else is changed (numbers, text that only holds a formula's character later, JSON)."""

from __future__ import annotations

import csv
import io

from bot.reporting.cells import csv_line, defused, json_line


def test_text_that_starts_like_a_formula_is_written_after_a_quote() -> None:
    starts = ["=1+2", "+SUM(A1)", "-2+3", "@home", "\tx", "\rx"]
    assert [defused(text) for text in starts] == ["'" + text for text in starts]


def test_a_number_and_text_without_a_formula_start_are_left_as_they_are() -> None:
    kept = ["-3", "+15145550199", "-0.5", "a=b", "", "hello -", "'quoted"]
    assert [defused(text) for text in kept] == kept


def test_a_csv_row_defuses_its_text_cells_but_not_its_numbers() -> None:
    line = csv_line(["=cmd", -3, 2.5, "ok", "-1"])
    assert line == "'=cmd,-3,2.5,ok,-1\r\n"


def test_a_cell_in_quotes_is_defused_inside_them() -> None:
    line = csv_line(['=HYPERLINK("x","y")', "b"])
    assert next(csv.reader(io.StringIO(line))) == ['\'=HYPERLINK("x","y")', "b"]


def test_json_lines_keep_the_text_as_written() -> None:
    assert json_line(["text"], {"text": "=1+2"}) == '{"text":"=1+2"}\n'
