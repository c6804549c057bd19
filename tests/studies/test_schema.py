"""The JSON Schema of study.yaml, for authors' editors."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest
import yaml

from bot.studies.schema import study_schema

PILOT = Path(__file__).resolve().parents[2] / "studies" / "walk-pilot" / "study.yaml"


def test_the_shipped_study_satisfies_the_schema() -> None:
    jsonschema.validate(yaml.safe_load(PILOT.read_text()), study_schema())


def test_the_schema_refuses_an_unknown_key() -> None:
    data = {**yaml.safe_load(PILOT.read_text()), "seed": "1234"}

    with pytest.raises(jsonschema.ValidationError, match="seed"):
        jsonschema.validate(data, study_schema())
