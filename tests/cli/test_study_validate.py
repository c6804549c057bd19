"""`tandem study validate [SLUG|PATH]`: every study, one by slug, one by folder or file, each
problem at file:line, exit 1 on errors; with no database and no LLM configured. And the hint a
refused study gives names this command, which then says why."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cli.main import cli
from bot.runtime.routing import intervention_catalogue
from bot.studies.catalogue import STUDIES, StudyCatalogue


@pytest.fixture(autouse=True)
def no_database_no_llm(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DATABASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "TANDEM_MASTER_KEY"):
        monkeypatch.delenv(name, raising=False)


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["study", "validate", *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    """walk-pilot with a ratio of 0 for its control arm."""
    folder = tmp_path / "broken-pilot"
    shutil.copytree(STUDIES / "walk-pilot", folder)
    path = folder / "study.yaml"
    text = path.read_text()
    assert "control: 1" in text
    path.write_text(text.replace("control: 1", "control: 0", 1))
    return folder


def test_every_shipped_study_validates_with_no_database_and_no_llm() -> None:
    code, out, err = run()
    assert code == 0, err
    for slug in ("walk-pilot", "smart-demo"):
        assert f"{STUDIES / slug}: ok" in out
    code, out, _ = run("walk-pilot")
    assert code == 0 and f"{STUDIES / 'walk-pilot'}: ok" in out


def test_a_broken_study_is_refused_at_its_line_by_folder_and_by_file(broken: Path) -> None:
    line = next(
        n
        for n, t in enumerate((broken / "study.yaml").read_text().splitlines(), 1)
        if "control: 0" in t
    )
    for given in (broken, broken / "study.yaml"):
        code, out, err = run(str(given))
        assert code == 1
        assert f"{broken.resolve() / 'study.yaml'}:{line}: " in err
        assert "ratio" in err and "problem(s)" in err
        assert ": ok" not in out


def test_an_unknown_slug_or_a_folder_without_a_study_is_refused(tmp_path: Path) -> None:
    code, _, err = run("no-such-study")
    assert code == 1 and "no such study; known: smart-demo, walk-pilot, walk-prompts" in err
    code, _, err = run(str(tmp_path))
    assert code == 1 and "no study.yaml there" in err


def test_the_refusal_hint_names_a_command_that_finds_the_problem(
    broken: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("bot.studies.catalogue.STUDIES", broken.parent)
    refusal = StudyCatalogue(broken.parent, intervention_catalogue()).refusal(broken.name)
    assert refusal is not None
    hint = refusal.split("check it with `tandem ")[1].rstrip("`").split()
    assert hint == ["study", "validate", broken.name]
    result = CliRunner().invoke(cli, hint)
    assert result.exit_code == 1
    assert f"{broken / 'study.yaml'}:" in result.stderr and "ratio" in result.stderr
