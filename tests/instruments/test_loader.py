"""Reading instruments from files and folders: problems come back as `file:line: message`,
and one broken file does not hide the others."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.instruments.loader import SHIPPED, load_instrument, read_instruments
from bot.interventions.language.problems import InterventionError

BROKEN = "title: Broken\ncitation: test\nitems:\n  - id: a\n    txt: A\n"


def test_a_misspelt_required_key_is_one_problem_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(BROKEN)
    with pytest.raises(InterventionError) as caught:
        load_instrument(path)
    assert [str(p) for p in caught.value.problems] == [
        f"{path}:5: item 'a': unknown key `txt`; did you mean `text`?"
    ]


def test_a_folder_keeps_its_good_instruments_beside_a_broken_one(tmp_path: Path) -> None:
    (tmp_path / "phq9.yaml").write_text((SHIPPED / "phq9.yaml").read_text())
    (tmp_path / "broken.yaml").write_text(BROKEN)
    instruments, problems = read_instruments(tmp_path)
    assert (list(instruments), {p.file for p in problems}) == (
        ["phq9"],
        {str(tmp_path / "broken.yaml")},
    )


def test_yaml_that_is_not_a_mapping_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "list.yaml"
    path.write_text("- a\n- b\n")
    with pytest.raises(InterventionError, match="list.yaml:1: expected `key: value` lines"):
        load_instrument(path)


def test_a_name_written_as_yaml_and_yml_is_refused(tmp_path: Path) -> None:
    (tmp_path / "phq9.yaml").write_text((SHIPPED / "phq9.yaml").read_text())
    (tmp_path / "phq9.yml").write_text((SHIPPED / "phq9.yaml").read_text())
    _, problems = read_instruments(tmp_path)
    assert [p.message for p in problems] == ["instrument 'phq9' is written twice"]


def test_a_missing_folder_is_a_problem(tmp_path: Path) -> None:
    assert [p.message for p in read_instruments(tmp_path / "none")[1]] == ["no such folder"]
