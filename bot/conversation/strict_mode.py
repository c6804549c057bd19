"""Strict mode, checked and explained: schema parts OpenAI refuses, and errors named by field.

Pure: no SDK. `bot/conversation/llm.py` states the rules for argument and judgement models and
applies these checks to the schema the openai SDK builds.
"""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import ValidationError


def schema_problems(schema: object, where: str) -> Iterator[str]:
    """What in a strict JSON schema OpenAI would reject, or strict mode cannot express."""
    if isinstance(schema, list):
        for item in schema:
            yield from schema_problems(item, where)
        return
    if not isinstance(schema, dict):
        return
    if "default" in schema:
        yield f"{where} has the default {schema['default']!r} (use `X | None = None`)"
    if schema.get("type") == "object" and schema.get("additionalProperties") is not False:
        yield f"{where} is an open object (use a nested model with fixed fields)"
    for name, sub in (schema.get("properties") or {}).items():
        yield from schema_problems(sub, f"{where}.{name}")
    for name, sub in (schema.get("$defs") or {}).items():
        yield from schema_problems(sub, name)
    for key in ("items", "anyOf", "allOf", "oneOf"):
        yield from schema_problems(schema.get(key), where)


def field_errors(exc: ValidationError) -> str:
    """Every problem named by its field ("field 'a.b': msg"), never quoting the value."""
    parts = []
    for error in exc.errors(include_url=False, include_input=False):
        where = ".".join(str(part) for part in error["loc"])
        parts.append(f"field '{where}': {error['msg']}" if where else error["msg"])
    return "; ".join(parts)
