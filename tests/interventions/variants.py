"""A copy of the good fixture intervention with one file changed, for one validator check."""

from __future__ import annotations

import shutil
from pathlib import Path

from bot.interventions.language.problems import Problem
from bot.interventions.validation.validate import validate_folder
from bot.runtime.tool_registry import TOOLS

FIXTURES = Path(__file__).resolve().parent / "fixtures"
GOOD = FIXTURES / "good"


def variant(tmp_path: Path, file: str, text: str | None = None, *, replace: tuple = ()) -> Path:
    """The good fixture in tmp_path with `file` written as `text` (None: deleted), or with
    `replace=(old, new)` applied to it."""
    folder = tmp_path / "good"
    if not folder.exists():
        shutil.copytree(GOOD, folder)
    path = folder / file
    if replace:
        old, new = replace
        current = path.read_text()
        assert old in current, f"{old!r} is not in {file}"
        text = current.replace(old, new)
    if text is None:
        path.unlink()
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return folder


def problems(folder: Path) -> list[str]:
    """Each problem as the CLI prints it, with the folder made relative."""
    return [_relative(p, folder) for p in validate_folder(folder, TOOLS)]


def _relative(problem: Problem, folder: Path) -> str:
    return str(problem).replace(f"{folder}/", "")
