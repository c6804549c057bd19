"""JSON Schema for intervention.yaml and each front matter kind, generated from the pydantic
models the loader validates with (bot.interventions.language.format), for authors' editors."""

from __future__ import annotations

from typing import Any

from bot.interventions.language.decisions_format import Decision
from bot.interventions.language.format import KINDS, Configuration, Form, Strict

DIALECT = "https://json-schema.org/draft/2020-12/schema"


def schemas() -> dict[str, dict[str, Any]]:
    """File name -> schema: `intervention.schema.json`, `form.schema.json` (forms/<name>.yaml)
    and `<kind>.schema.json` per kind, and `decision.schema.json` (decisions/<name>.md)."""
    found = {"intervention.schema.json": _schema(Configuration, "intervention.yaml")}
    found["form.schema.json"] = _schema(Form, "a form file (forms/<name>.yaml)")
    for kind, model in KINDS.items():
        found[f"{kind}.schema.json"] = _schema(model, f"the front matter of a {kind} file")
    found["decision.schema.json"] = _schema(Decision, "the front matter of a decision file")
    return found


def _schema(model: type[Strict], what: str) -> dict[str, Any]:
    schema = model.model_json_schema(mode="validation")
    return {**schema, "$schema": DIALECT, "title": f"Tandem: {what}"}
