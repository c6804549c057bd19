"""JSON Schema for study.yaml, generated from the pydantic models the loader validates with
(bot.studies.format), for authors' editors (as `tandem interventions schema` does)."""

from __future__ import annotations

from typing import Any

from bot.interventions.language.schema import DIALECT
from bot.studies.format import Study


def study_schema() -> dict[str, Any]:
    """The schema of `studies/<slug>/study.yaml` (written as `study.schema.json`)."""
    schema = Study.model_json_schema(mode="validation")
    return {**schema, "$schema": DIALECT, "title": "Tandem: study.yaml"}
