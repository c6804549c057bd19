"""Typed results declared in front matter, turned into pydantic models for structured output.

The models follow bot/conversation/llm.py's strict-mode rules: a docstring the model reads, every
field required (an `optional` field is `X | None = None`), enums as `Literal`, ranges as `ge`/`le`,
no other defaults, `extra="forbid"`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from bot.interventions.language.format import FieldSpec

_PYTHON = {"text": str, "int": int, "number": float, "bool": bool, "list": list[str]}
_PYTHON |= {"date": str, "time": str}
PATTERNS = {"date": r"^\d{4}-\d{2}-\d{2}$", "time": r"^\d{2}:\d{2}$"}
SAMPLES = {"text": "example text", "int": 1, "number": 1.0, "bool": True, "list": ["example"]}
SAMPLES |= {"date": "2026-03-02", "time": "09:00"}


def class_name(slug: str, suffix: str) -> str:
    """ "engaged" -> "EngagedResult"; a name the LLM API accepts (letters, digits)."""
    words = re.split(r"[^A-Za-z0-9]+", slug)
    return "".join(word[:1].upper() + word[1:] for word in words if word)[:50] + suffix


def field_annotation(spec: FieldSpec) -> tuple[Any, dict[str, Any]]:
    """The annotation and Field keywords of one declared field."""
    if spec.type == "choice":
        annotation: Any = Literal[tuple(spec.choices())]
    else:
        annotation = _PYTHON[spec.type]
    keywords: dict[str, Any] = {}
    if spec.type in PATTERNS:
        keywords["pattern"] = PATTERNS[spec.type]
    if spec.min is not None:
        keywords["ge"] = int(spec.min) if spec.type == "int" else spec.min
    if spec.max is not None:
        keywords["le"] = int(spec.max) if spec.type == "int" else spec.max
    return annotation, keywords


def describe(spec: FieldSpec) -> str:
    """The field's description, with each option's meaning and the range, for the model."""
    parts = [spec.description.strip()] if spec.description else []
    meanings = [f'"{value}": {meaning}' for value, meaning in spec.choices().items() if meaning]
    if meanings:
        parts.append("Options: " + "; ".join(meanings) + ".")
    if spec.min is not None and spec.max is not None:
        parts.append(f"From {spec.min:g} to {spec.max:g}.")
    elif spec.min is not None:
        parts.append(f"At least {spec.min:g}.")
    elif spec.max is not None:
        parts.append(f"At most {spec.max:g}.")
    if spec.type in PATTERNS:
        parts.append("As YYYY-MM-DD." if spec.type == "date" else "As HH:MM (24-hour).")
    if spec.optional:
        parts.append("null if it cannot be told.")
    return " ".join(parts)


def result_model(
    name: str, fields: Mapping[str, FieldSpec], doc: str, suffix: str = "Result"
) -> type[BaseModel]:
    """A pydantic model with one field per declared field, in order."""
    definitions: dict[str, Any] = {}
    for field_name, spec in fields.items():
        annotation, keywords = field_annotation(spec)
        description = describe(spec) or None
        if spec.optional:
            definitions[field_name] = (
                annotation | None,
                Field(None, description=description, **keywords),
            )
        else:
            definitions[field_name] = (annotation, Field(description=description, **keywords))
    return create_model(
        class_name(name, suffix),
        __config__=ConfigDict(extra="forbid"),
        __doc__=doc.strip() or f"The result of {name}.",
        **definitions,
    )


def sample(spec: FieldSpec) -> Any:
    """A representative value of a field, for validating templates and conditions."""
    if spec.type == "choice":
        return next(iter(spec.choices()))
    if spec.type in ("int", "number") and spec.min is not None:
        return int(spec.min) if spec.type == "int" else spec.min
    return SAMPLES[spec.type]
