"""A pydantic validation error worded for an author: the key path and a sentence naming the key
(`unknown key`, `is required`, or the check's own message), shared by every file format."""

from __future__ import annotations

from typing import Any


def worded(error: Any) -> tuple[tuple[Any, ...], str]:
    """One entry of `ValidationError.errors()` as (its key path, the author's message)."""
    loc = tuple(error["loc"])
    where = ".".join(str(part) for part in loc)
    message = str(error["msg"]).removeprefix("Value error, ")
    if error["type"] == "extra_forbidden":
        message = f"unknown key `{where}`"
    elif error["type"] == "missing":
        message = f"`{where}` is required"
    elif where:
        message = f"`{where}`: {message}"
    return loc, message
