"""Every intervention shipped under interventions/ validates (a new folder is picked up)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.instruments.administration import attach
from bot.interventions.validation.validate import intervention_folders, validate_folder
from bot.runtime.tool_registry import TOOLS

SHIPPED = Path(__file__).resolve().parents[2] / "interventions"


@pytest.mark.parametrize("folder", intervention_folders(SHIPPED), ids=lambda p: p.name)
def test_a_shipped_intervention_validates(folder: Path) -> None:
    assert [str(problem) for problem in validate_folder(folder, TOOLS, attach=attach)] == []
