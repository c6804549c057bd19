"""A pydantic validation error worded for an author: the key path and a sentence naming the key
(`unknown key`, `is required`, or the check's own message), shared by every file format.

pydantic's own steps never reach the author: `result.urge.options.dict[str,str].1.[key]`
(a union's branch, a mapping's key) is said as "`result.urge.options`: the key `1` should be
text (quote it: '1')", and of a union's branches only the one the value came closest to
matching is said."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

# What a validation error of each kind says to an author (also bot.instruments.wording's).
KINDS = {
    "string_type": "should be text",
    "int_type": "should be a whole number",
    "int_parsing": "should be a whole number",
    "int_from_float": "should be a whole number",
    "float_type": "should be a number",
    "float_parsing": "should be a number",
    "bool_type": "should be true or false",
    "bool_parsing": "should be true or false",
    "list_type": "should be a list (lines starting with `- `, or `[a, b]`)",
    "dict_type": "should be `key: value` lines",
    "model_type": "should be `key: value` lines",
    "model_attributes_type": "should be `key: value` lines",
}


def internal(part: Any) -> bool:
    """pydantic's own steps in a path: `[key]`, `dict[str,str]`, `function-after[...]`."""
    return isinstance(part, str) and ("[" in part or part in ("int", "str", "float", "bool"))


def author_path(loc: Iterable[Any]) -> tuple[Any, ...]:
    """The key path as the author wrote it (pydantic's own steps left out)."""
    return tuple(part for part in loc if not internal(part))


def worded(error: Any) -> tuple[tuple[Any, ...], str]:
    """One entry of `ValidationError.errors()` as (its key path, the author's message)."""
    raw = tuple(error["loc"])
    loc = author_path(raw)
    where = ".".join(str(part) for part in loc)
    message = str(error["msg"]).removeprefix("Value error, ")
    kind = error["type"]
    if kind == "extra_forbidden":
        message = f"unknown key `{where}`"
    elif kind == "missing":
        message = f"`{where}` is required"
    elif "[key]" in raw and loc:
        owner = ".".join(str(part) for part in loc[:-1])
        what = KINDS.get(kind, message)
        quote = f" (quote it: '{loc[-1]}')" if kind == "string_type" else ""
        message = f"`{owner}`: the key `{loc[-1]}` {what}{quote}"
        loc = (*loc[:-1], str(loc[-1]))  # a key's line is found by its text
    elif where:
        message = f"`{where}`: {KINDS.get(kind, message)}"
    return loc, message


def closest_branches(errors: list[Any]) -> list[Any]:
    """The errors, but of a union's branches (`dict[str,str]`, `list[str]`) only those of the
    branch whose errors go deepest: the one the author was writing."""
    chosen: dict[tuple[Any, ...], tuple[int, Any]] = {}
    for error in errors:
        loc = tuple(error["loc"])
        for n, part in enumerate(loc):
            if internal(part) and part != "[key]":
                depth, _ = chosen.get(loc[:n], (-1, None))
                if len(loc) > depth:
                    chosen[loc[:n]] = (len(loc), part)
                break
    kept = []
    for error in errors:
        loc = tuple(error["loc"])
        branch = next((n for n, p in enumerate(loc) if internal(p) and p != "[key]"), None)
        if branch is None or chosen[loc[:branch]][1] == loc[branch]:
            kept.append(error)
    return kept
